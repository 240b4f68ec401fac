// The evaluation stage of a run: pending samples through the isolated workers, one transaction each.
#include "core/host/evaluation_stage.hpp"

#include "core/host/host_services.hpp"
#include "core/host/log.hpp"
#include "core/host/progress.hpp"
#include "core/host/repro.hpp"
#include "core/base/text.hpp"
#include "harness/sandbox/protections.hpp"
#include "results/bandwidth_cache.hpp"
#include "results/baseline_cache.hpp"
#include "results/trait_cache.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <deque>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <mutex>
#include <set>
#include <thread>

namespace dicebench::host {
namespace {

template <class T>
Result<T> number_setting(const Config& config, const std::string& key, T fallback, T minimum) {
  const auto text = config.get(key);
  if (!text) return fallback;
  T value{};
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec != std::errc() || end != text->data() + text->size() || value < minimum)
    return make_error(fmt::format("setting '{}' must be a number of at least {}, not '{}'", key, minimum, *text));
  return value;
}

std::string dump(const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

// Baselines are shared by runs on the same GPU, torch and timing method (the reference worker says
// which device, torch and timer it has).
Result<results::BaselineKey> baseline_key(harness::Evaluator& evaluator, const std::string& problem_hash) {
  auto info = evaluator.reference_info();
  if (!info) return info.error();
  return results::BaselineKey{problem_hash, info->value("device_name", "unknown"), info->value("torch", "unknown"),
                              evaluator.settings().baseline_method + "/" + info->value("timer", "unknown") + "/" +
                                  harness::kTimingInputs};
}

harness::Timing timing_of(const results::Baseline& b) {
  return {b.median_ms, b.mean_ms, b.std_ms, b.min_ms, b.max_ms, b.p10_ms, b.p90_ms, b.trials};
}

results::Baseline baseline_of(const results::BaselineKey& key, const harness::Timing& t) {
  results::Baseline b;
  b.key = key;
  b.median_ms = t.median_ms;
  b.mean_ms = t.mean_ms;
  b.std_ms = t.std_ms;
  b.min_ms = t.min_ms;
  b.max_ms = t.max_ms;
  b.p10_ms = t.p10_ms;
  b.p90_ms = t.p90_ms;
  b.trials = t.trials;
  return b;
}

// eval.sandbox = best | require | off, eval.keep_jobs, and the sandbox's limits.
Result<void> sandbox_settings(const Config& config, harness::EvaluationSettings& s) {
  s.sandbox.mode = config.get("eval.sandbox").value_or("best");
  if (std::find(sandbox::kModes.begin(), sandbox::kModes.end(), s.sandbox.mode) == sandbox::kModes.end())
    return make_error(fmt::format("eval.sandbox must be best, require or off, not '{}'", s.sandbox.mode));
  s.sandbox.executable = beside_worker(s.worker_executable, "dicebench-sandbox", "DICEBENCH_SANDBOX");
  const std::string keep = config.get("eval.keep_jobs").value_or("false");
  if (keep != "true" && keep != "false") return make_error(fmt::format("eval.keep_jobs must be true or false, not '{}'", keep));
  s.keep_jobs = keep == "true";
  const std::pair<const char*, uint64_t*> sizes[] = {{"eval.memory_max", &s.sandbox.memory_max_bytes},
                                                     {"eval.file_size_max", &s.sandbox.file_size_max_bytes}};
  s.sandbox.memory_max_bytes = harness::half_of_physical_memory();
  for (const auto& [key, target] : sizes) {
    const auto text = config.get(key);
    if (!text) continue;
    const auto bytes = harness::parse_size(*text);
    if (!bytes || *bytes == 0)
      return make_error(fmt::format("setting '{}' must be a size such as 16GiB or 512MiB{}, not '{}'", key,
                                    std::string(key) == "eval.memory_max" ? " (or auto: half of this machine's memory)" : "", *text));
    *target = *bytes;
  }
  auto pids = number_setting<uint64_t>(config, "eval.pids_max", s.sandbox.pids_max, 16);
  if (!pids) return pids.error();
  s.sandbox.pids_max = *pids;
  auto files = number_setting<uint64_t>(config, "eval.open_files_max", s.sandbox.open_files_max, 64);
  if (!files) return files.error();
  s.sandbox.open_files_max = *files;
  return {};
}

}  // namespace

Result<harness::EvaluationSettings> evaluation_settings(const Config& config) {
  harness::EvaluationSettings s;
  s.worker_executable = worker_executable();
  // The fast path's trusted compile step (without it every load_inline call fell back to torch's
  // toolchain: "dicebench-sandbox: cannot run : No such file or directory", on the H200).
  s.compile_executable = beside_worker(s.worker_executable, "dicebench-compile", "DICEBENCH_COMPILE");
  // Default: CUDA where a GPU is visible (nvidia-smi, without touching CUDA here), else the CPU.
  s.device = config.get("eval.device").value_or(std::system("nvidia-smi -L > /dev/null 2>&1") == 0 ? "cuda" : "cpu");
  if (s.device != "cpu" && s.device != "cuda") return make_error(fmt::format("eval.device must be cpu or cuda, not '{}'", s.device));
  s.tolerance = config.get("eval.tolerance").value_or("kernelbench");
  if (s.tolerance != "kernelbench" && s.tolerance != "compat")
    return make_error(fmt::format("eval.tolerance must be kernelbench or compat, not '{}'", s.tolerance));
  s.model_mode = config.get("eval.model_mode").value_or("train");
  if (s.model_mode != "train" && s.model_mode != "eval")
    return make_error(fmt::format("eval.model_mode must be train (KernelBench's) or eval, not '{}'", s.model_mode));
  auto trials = number_setting<int>(config, "eval.trials", 5, 1);
  if (!trials) return trials.error();
  s.trials = *trials;
  auto timeout = number_setting<double>(config, "eval.timeout_s", 300.0, 1.0);
  if (!timeout) return timeout.error();
  s.candidate_timeout = std::chrono::milliseconds(static_cast<long long>(*timeout * 1000));
  auto compile_timeout = number_setting<double>(config, "eval.compile_timeout_s", 600.0, 1.0);
  if (!compile_timeout) return compile_timeout.error();
  s.compile_timeout = std::chrono::milliseconds(static_cast<long long>(*compile_timeout * 1000));
  const std::string fastpath = config.get("eval.fastpath").value_or("on");
  if (fastpath != "on" && fastpath != "off") return make_error(fmt::format("eval.fastpath must be on or off, not '{}'", fastpath));
  s.fastpath = fastpath == "on";
  s.fastpath_cache = config.get("eval.fastpath_cache").value_or("");
  auto prefetch = number_setting<int>(config, "eval.prefetch", 4, 0);
  if (!prefetch) return prefetch.error();
  s.prefetch = *prefetch;
  s.baseline_method = config.get("eval.baseline").value_or("eager");
  if (s.baseline_method != "eager" && s.baseline_method != "compile")
    return make_error(fmt::format("eval.baseline must be eager or compile (torch.compile), not '{}'", s.baseline_method));
  auto budget = number_setting<double>(config, "eval.timing_budget_s", 10.0, 0.0);
  if (!budget) return budget.error();
  s.budget_seconds = *budget;
  auto bound = number_setting<double>(config, "eval.speedup_bound", 10.0, 0.0);
  if (!bound) return bound.error();
  s.speedup_bound = *bound;
  auto gbps = number_setting<double>(config, "eval.bandwidth_gbps", 0.0, 0.0);
  if (!gbps) return gbps.error();
  s.bandwidth = *gbps * 1e9;
  const std::string confirm = config.get("eval.confirm_fastpath").value_or("on");
  if (confirm != "on" && confirm != "off")
    return make_error(fmt::format("eval.confirm_fastpath must be on or off, not '{}'", confirm));
  s.confirm_fastpath_failures = confirm == "on";
  DICEBENCH_TRY(sandbox_settings(config, s));
  // Secret per process: never stored, so nothing a candidate can read reveals the input seeds.
  std::random_device random;
  s.secret = (static_cast<uint64_t>(random()) << 32) ^ random();
  return s;
}

std::string beside_worker(const std::string& worker, const char* name, const char* variable) {
  if (const char* env = std::getenv(variable)) return env;
  return (std::filesystem::path(worker).parent_path() / name).string();
}

std::string worker_executable() {
  if (const char* env = std::getenv("DICEBENCH_WORKER")) return env;
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return (self.parent_path() / "dicebench-worker").string();
}

results::NewEvaluation evaluation_row(int64_t sample, const harness::Evaluation& e, const std::string& device) {
  results::NewEvaluation row;
  for (const auto& [flag, detail] : e.flags) row.flags.push_back({flag, detail});
  row.sample = sample;
  row.status = e.status;
  row.compiled = e.compiled;
  row.correct = e.correct;
  row.device = device;
  if (e.runtime) {
    row.runtime_ms = e.runtime->median_ms;
    row.runtime_mean_ms = e.runtime->mean_ms;
    row.runtime_std_ms = e.runtime->std_ms;
    row.runtime_min_ms = e.runtime->min_ms;
    row.runtime_max_ms = e.runtime->max_ms;
    row.runtime_p10_ms = e.runtime->p10_ms;
    row.runtime_p90_ms = e.runtime->p90_ms;
  }
  if (e.baseline) {
    row.baseline_ms = e.baseline->median_ms;
    row.baseline_mean_ms = e.baseline->mean_ms;
  }
  row.speedup = e.speedup;
  row.speedup_mean = e.speedup_mean;
  row.margin = e.margin;
  row.memory_floor_ms = e.memory_floor_ms;
  if (!e.error_class.empty()) row.error_class = e.error_class;
  if (!e.error_message.empty()) row.error_message = e.error_message.substr(0, 8000);
  nlohmann::json details = {{"seconds", e.seconds}, {"phases", e.phases}};
  if (e.max_abs_diff) details["max_abs_diff"] = *e.max_abs_diff;
  if (e.mean_abs_diff) details["mean_abs_diff"] = *e.mean_abs_diff;
  if (e.failed_trial) details["failed_trial"] = *e.failed_trial;
  if (e.failed_call) details["failed_call"] = *e.failed_call;
  if (!e.failed_stage.empty()) details["failed_stage"] = e.failed_stage;
  if (e.timed_calls) details["timed_calls"] = {{"calls", e.timed_calls}, {"checked", e.checked_calls}};
  if (e.input_bytes || e.output_bytes) details["io_bytes"] = {{"inputs", e.input_bytes}, {"outputs", e.output_bytes}};
  if (e.fastpath_outcome) details["fastpath_outcome"] = *e.fastpath_outcome;
  if (e.compile && e.compile->jit.value("count", 0) > 0) details["jit_compile"] = e.compile->jit;
  if (e.runtime) details["runtime_trials"] = e.runtime->trials;
  if (e.baseline) {
    details["baseline_trials"] = e.baseline->trials;
    details["baseline_source"] = e.baseline_measured ? "measured" : "cache";
  }
  if (!e.log_tail.empty()) details["log_tail"] = e.log_tail;
  if (e.compile) {
    row.compile_path = e.compile->path;
    if (!e.compile->reason.empty()) row.compile_reason = e.compile->reason;
    row.compile_seconds = e.compile->seconds;
    if (!e.compile->log.empty()) row.compile_log = e.compile->log;
    nlohmann::json records = e.compile->records;  // their errors are in compile_log already
    for (auto& record : records)
      if (record.is_object()) record.erase("error");
    details["compile_records"] = std::move(records);
  }
  if (e.profile) {
    row.device_busy_ms = e.profile->busy_ms;
    row.host_wall_ms = e.profile->host_ms;
    row.call_host_ms = e.profile->call_host_ms;
    row.launch_latency_ms = e.profile->launch_latency_ms;
    row.start_span_ms = e.profile->span_ms;
    row.custom_kernel_share = std::clamp(e.profile->candidate_share, 0.0, 1.0);
    for (const auto& k : e.profile->kernels)
      row.kernels.push_back({k.name, k.kind, k.from_candidate, k.launches_per_call, k.ms_per_call, k.grid, k.block});
  }
  row.details_json = dump(details);
  return row;
}

Result<std::vector<std::optional<std::string>>> evaluation_slots(const Config& config, const std::string& device) {
  std::vector<std::optional<std::string>> slots;
  if (device == "cpu") {
    auto workers = number_setting<int>(config, "eval.cpu_workers", 1, 1);
    if (!workers) return workers.error();
    slots.assign(static_cast<size_t>(*workers), std::nullopt);
    return slots;
  }
  const std::vector<std::string> visible = visible_gpus();
  const std::string wanted = config.get("eval.gpus").value_or("all");
  if (wanted == "all") {
    if (visible.empty()) return make_error("no GPU is visible (nvidia-smi lists none); evaluate with --device cpu");
    for (const auto& gpu : visible) slots.emplace_back(gpu);
    return slots;
  }
  for (const auto& entry : split(wanted, ',')) {
    const std::string gpu(trim(entry));
    if (std::find(visible.begin(), visible.end(), gpu) == visible.end())
      return make_error(fmt::format("eval.gpus names GPU '{}', but the visible GPUs are: {}", gpu,
                                    visible.empty() ? "none" : join(visible, ",")));
    if (std::find(slots.begin(), slots.end(), std::optional<std::string>(gpu)) != slots.end())
      return make_error(fmt::format("eval.gpus names GPU '{}' twice", gpu));
    slots.emplace_back(gpu);
  }
  if (slots.empty()) return make_error("eval.gpus names no GPU");
  return slots;
}

Result<EvaluationSummary> evaluate_pending(results::Store& store, int64_t run,
                                           const std::map<ProblemKey, ProblemSource>& problems,
                                           const harness::EvaluationSettings& settings,
                                           const std::vector<std::optional<std::string>>& slots,
                                           const CandidateReview& review) {
  EvaluationSummary summary;
  auto samples = store.samples(run, false);
  if (!samples) return samples.error();
  auto evaluated = store.evaluations(run);
  if (!evaluated) return evaluated.error();
  std::set<int64_t> done;
  for (const auto& e : *evaluated) done.insert(e.sample);
  std::vector<const results::SampleRow*> todo;
  for (const auto& s : *samples)
    if (!done.count(s.id)) todo.push_back(&s);
  for (const auto* sample : todo)
    if (sample->candidate && !problems.count({sample->level, sample->problem_id}))
      return make_error(fmt::format("run {} has a sample of problem {}, which the suite no longer has", run,
                                    problem_key_text({sample->level, sample->problem_id})));

  // One evaluator per slot (a GPU, or a CPU worker), each in its own thread, taking samples from
  // a shared queue; the store (one connection) and the progress line are shared under a lock.
  Progress progress("evaluating", todo.size(), "samples");
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex lock;
  std::optional<Error> first_error;
  std::set<std::string> looked_up;  // problem hashes already looked up in the caches, per device
  std::set<ProblemKey> traits_noted;  // problems whose traits this run has recorded
  auto fail = [&](Error error) {
    std::lock_guard guard(lock);
    if (!first_error) first_error = std::move(error);
    stop = true;
  };
  // Which of the claimed samples to evaluate next: the first that needs no compile wait (no
  // candidate, or ready), polling while some are still loading; else the first.
  auto next_ready = [&](harness::Evaluator& evaluator, const std::deque<size_t>& claimed) -> size_t {
    while (!stop && !HostServices::cancel_requested()) {
      bool loading = false;
      for (size_t i = 0; i < claimed.size(); ++i) {
        const auto& candidate = todo[claimed[i]]->candidate;
        if (!candidate) return i;
        const auto state = evaluator.load_state(*candidate);
        if (state == harness::Evaluator::LoadState::ready) return i;
        loading = loading || state == harness::Evaluator::LoadState::loading;
      }
      if (!loading) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return 0;
  };
  auto work = [&](const std::optional<std::string>& slot) {
    harness::EvaluationSettings mine = settings;
    mine.visible_devices = slot;
    harness::Evaluator evaluator(mine);
    evaluator.start_reference();
    // This slot's claimed samples, all prefetched: the first whose candidate has compiled is
    // evaluated next, so a slow or broken compile holds up no one behind it.
    std::deque<size_t> claimed;
    auto claim = [&] {
      const size_t index = next++;
      if (index >= todo.size()) return;
      claimed.push_back(index);
      if (todo[index]->candidate) evaluator.prefetch(*todo[index]->candidate);
    };
    for (int i = 0; i <= mine.prefetch; ++i) claim();
    while (!claimed.empty() && !stop) {
      if (HostServices::cancel_requested()) {
        std::lock_guard guard(lock);
        summary.interrupted = true;
        stop = true;
        break;
      }
      const auto picked = claimed.begin() + static_cast<std::ptrdiff_t>(next_ready(evaluator, claimed));
      const size_t current = *picked;
      claimed.erase(picked);
      claim();
      const auto* sample = todo[current];
      results::NewEvaluation row;
      if (!sample->candidate) {
        row.sample = sample->id;
        row.status = results::Verdict::extraction_failed;
        row.device = settings.device;
        row.error_class = "extraction_failed";
        row.error_message = "the completion holds no code block";
      } else {
        const ProblemSource& problem = problems.at({sample->level, sample->problem_id});
        auto key = baseline_key(evaluator, problem.content_hash);
        if (!key) return fail(key.error());
        const results::TraitKey trait_key{problem.content_hash, key->device_name, settings.tolerance};
        {
          std::lock_guard guard(lock);
          if (looked_up.insert(problem.content_hash + "@" + slot.value_or("cpu")).second) {
            auto cached = results::find_baseline(store, *key);
            if (!cached) return fail(cached.error());
            if (*cached) evaluator.set_baseline(problem.content_hash, timing_of(**cached));
            auto traits = results::find_traits(store, trait_key);
            if (!traits) return fail(traits.error());
            if (*traits)
              evaluator.set_traits(problem.content_hash, {nlohmann::json::parse((*traits)->traits_json),
                                                          nlohmann::json::parse((*traits)->details_json)});
          }
          if (looked_up.insert("bandwidth@" + slot.value_or("cpu")).second && settings.bandwidth <= 0) {
            auto bandwidth = results::find_bandwidth(store, key->device_name);
            if (!bandwidth) return fail(bandwidth.error());
            if (*bandwidth) evaluator.set_bandwidth({(*bandwidth)->bytes_per_second, (*bandwidth)->method});
          }
        }
        auto evaluation = evaluator.evaluate(problem.source, problem.content_hash, *sample->candidate);
        if (!evaluation)
          return fail(make_error(fmt::format("problem {} sample {}: {}", problem_key_text({sample->level, sample->problem_id}), sample->sample_index,
                                             evaluation.error().message)));
        std::lock_guard guard(lock);
        if (evaluation->baseline_measured && evaluation->baseline)
          if (auto put = results::put_baseline(store, baseline_of(*key, *evaluation->baseline)); !put) return fail(put.error());
        if (const auto& t = evaluation->traits_measured)
          if (auto put = results::put_traits(store, {trait_key, dump(t->traits), dump(t->details), ""}); !put)
            return fail(put.error());
        if (const auto& b = evaluation->bandwidth_measured)
          if (auto put = results::put_bandwidth(store, {key->device_name, b->method, b->bytes_per_second, ""}); !put)
            return fail(put.error());
        if (const auto traits = evaluator.traits(problem.content_hash); traits && traits_noted.insert({sample->level, sample->problem_id}).second) {
          if (auto set = store.set_problem_traits(run, {sample->level, sample->problem_id}, dump(traits->traits)); !set) return fail(set.error());
          if (!traits->traits.empty()) ++summary.degenerate_problems;
        }
        row = evaluation_row(sample->id, *evaluation, settings.device);
        if (review) {
          auto found = review({sample->level, sample->problem_id}, *sample->candidate);
          if (!found) return fail(found.error());
          for (auto& [flag, detail] : *found) row.flags.push_back({flag, std::move(detail)});
        }
      }
      std::lock_guard guard(lock);
      if (auto inserted = store.insert_evaluation(row); !inserted) return fail(inserted.error());
      ++summary.verdicts[std::string(results::verdict_name(row.status))];
      for (const auto& flag : row.flags) ++summary.flags[std::string(results::flag_name(flag.flag))];
      ++summary.evaluated;
      progress.advance();
    }
  };
  if (slots.size() <= 1) {
    work(slots.empty() ? std::nullopt : slots.front());
  } else {
    std::vector<std::thread> threads;
    for (const auto& slot : slots) threads.emplace_back(work, slot);
    for (auto& thread : threads) thread.join();
  }
  if (first_error) return *first_error;
  summary.timing = progress.finish();
  return summary;
}

}  // namespace dicebench::host
