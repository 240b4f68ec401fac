// Evaluates one candidate against its problem through isolated reference and candidate workers.
#include "harness/client/evaluator.hpp"

#include "core/base/sha256.hpp"
#include "core/base/text.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

namespace dicebench::harness {
namespace {

namespace fs = std::filesystem;

uint64_t mix(uint64_t secret, const std::string& problem_hash, uint64_t index) {
  // Seeds the candidate cannot derive: SHA-256 over the run's secret, the problem and the index.
  const std::string digest = sha256_hex(fmt::format("{}:{}:{}", secret, problem_hash, index));
  return std::strtoull(digest.substr(0, 15).c_str(), nullptr, 16);
}

// A number field that may be absent or null (a shape mismatch has no difference to report).
std::optional<double> number(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? std::optional<double>(it->get<double>()) : std::nullopt;
}

Timing timing_from(const nlohmann::json& j) {
  Timing t;
  t.median_ms = j.value("median_ms", 0.0);
  t.mean_ms = j.value("mean_ms", 0.0);
  t.std_ms = j.value("std_ms", 0.0);
  t.min_ms = j.value("min_ms", 0.0);
  t.max_ms = j.value("max_ms", 0.0);
  t.p10_ms = j.value("p10_ms", 0.0);
  t.p90_ms = j.value("p90_ms", 0.0);
  t.trials = j.value("trials", 0);
  return t;
}

std::string tail_of_file(const fs::path& path, size_t bytes) {
  std::string text, why;
  if (!read_file(path.string(), &text, &why)) return "";
  return text.size() > bytes ? "..." + text.substr(text.size() - bytes) : text;
}

// A job folder only this user can enter, removed when the evaluation ends.
struct JobFolder {
  fs::path path;
  explicit JobFolder(const std::string& root) {
    std::string pattern = (fs::path(root.empty() ? fs::temp_directory_path().string() : root) / "dicebench-job-XXXXXX").string();
    if (mkdtemp(pattern.data())) path = pattern;
  }
  ~JobFolder() {
    std::error_code ec;
    if (!path.empty()) fs::remove_all(path, ec);
  }
};

}  // namespace

Evaluator::Evaluator(EvaluationSettings settings) : settings_(std::move(settings)) {}

Evaluator::~Evaluator() {
  if (reference_ && reference_->alive()) (void)reference_->call({{"type", "shutdown"}}, std::chrono::seconds(5));
}

Result<WorkerProcess*> Evaluator::reference() {
  if (reference_ && reference_->alive()) return reference_.get();
  if (log_dir_.empty()) {
    JobFolder folder(settings_.work_root);
    if (folder.path.empty()) return make_error("cannot create a folder for worker logs");
    log_dir_ = folder.path.string() + "-logs";
    std::error_code ec;
    fs::create_directories(log_dir_, ec);
  }
  WorkerOptions options{settings_.worker_executable, "reference", settings_.device, log_dir_ + "/reference.log",
                        settings_.visible_devices};
  auto started = WorkerProcess::start(options);
  if (!started) return started.error();
  reference_ = std::move(*started);
  return reference_.get();
}

Result<nlohmann::json> Evaluator::reference_info() {
  auto ref = reference();
  if (!ref) return ref.error();
  return (*ref)->hello();
}

Result<Timing> Evaluator::baseline(const std::string& job, const std::string& problem_hash, bool* measured) {
  *measured = false;
  if (auto it = baselines_.find(problem_hash); it != baselines_.end()) return it->second;
  auto ref = reference();
  if (!ref) return ref.error();
  const nlohmann::json request = {{"type", "reference.time"}, {"job", job},
                                  {"warmup", settings_.warmup}, {"min_trials", settings_.min_trials},
                                  {"max_trials", settings_.max_trials}, {"budget_s", settings_.budget_seconds},
                                  {"target_rel_ci", settings_.target_rel_ci}};
  auto timed = (*ref)->call(request, settings_.reference_timeout);
  if (timed.failure != CallFailure::none) return make_error("timing the reference failed: " + timed.message);
  const Timing timing = timing_from(timed.reply->at("timing"));
  baselines_[problem_hash] = timing;
  *measured = true;
  return timing;
}

Result<Evaluation> Evaluator::evaluate(const std::string& problem_source, const std::string& problem_hash,
                                       const std::string& candidate_source) {
  const auto started = std::chrono::steady_clock::now();
  const std::string job = fmt::format("job-{}", ++next_job_);
  JobFolder folder(settings_.work_root);
  if (folder.path.empty()) return make_error("cannot create a job folder under " + settings_.work_root);
  const fs::path outputs = folder.path / "outputs";
  fs::create_directories(outputs);

  nlohmann::json seeds = nlohmann::json::array();
  for (int t = 0; t < settings_.trials; ++t) seeds.push_back(mix(settings_.secret, problem_hash, static_cast<uint64_t>(t)));
  const uint64_t init_seed = mix(settings_.secret, problem_hash, 1'000'003);

  auto ref = reference();
  if (!ref) return ref.error();
  const nlohmann::json prepare = {{"type", "reference.prepare"}, {"job", job},           {"problem_source", problem_source},
                                  {"problem_name", problem_hash}, {"device", settings_.device}, {"init_seed", init_seed},
                                  {"input_seeds", seeds},        {"work_dir", folder.path.string()},
                                  {"tolerance", settings_.tolerance}, {"model_mode", settings_.model_mode}};
  auto prepared = (*ref)->call(prepare, settings_.reference_timeout);
  if (prepared.failure != CallFailure::none) return make_error("the reference worker failed: " + prepared.message);
  if (!prepared.reply->value("ok", false))
    return make_error("the reference program failed: " + prepared.reply->value("message", std::string("no reason given")));
  struct Release {
    WorkerProcess* worker;
    std::string job;
    ~Release() {
      if (worker->alive()) (void)worker->call({{"type", "reference.release"}, {"job", job}}, std::chrono::seconds(60));
    }
  } release{*ref, job};

  Evaluation evaluation;
  const fs::path candidate_log = folder.path / "candidate.log";
  auto finish = [&]() -> Result<Evaluation> {
    evaluation.log_tail = tail_of_file(candidate_log, 2000);
    evaluation.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return evaluation;
  };

  WorkerOptions options{settings_.worker_executable, "candidate", settings_.device, candidate_log.string(),
                        settings_.visible_devices};
  auto candidate = WorkerProcess::start(options);
  if (!candidate) return candidate.error();
  const nlohmann::json run = {
      {"type", "candidate.run"},
      {"job", job},
      {"candidate_source", candidate_source},
      {"device", settings_.device},
      {"init_seed", init_seed},
      {"inputs", prepared.reply->at("inputs")},
      {"init_inputs", prepared.reply->value("init_inputs", "")},
      {"outputs_dir", outputs.string()},
      {"timing",
       {{"warmup", settings_.warmup}, {"min_trials", settings_.min_trials}, {"max_trials", settings_.max_trials},
        {"budget_s", settings_.budget_seconds}, {"target_rel_ci", settings_.target_rel_ci}}},
      {"timed_output_trials", nlohmann::json::array({settings_.trials > 1 ? 1 : 0})},
      {"model_mode", settings_.model_mode}};
  auto result = (*candidate)->call(run, settings_.candidate_timeout);
  (*candidate)->kill();  // one candidate per process, always
  if (result.failure != CallFailure::none) {
    evaluation.status = result.failure == CallFailure::timeout ? "timeout" : "crashed";
    evaluation.compiled = result.last_stage == "loaded" || result.last_stage == "ran";
    evaluation.error_class = evaluation.status;
    evaluation.error_message = result.message + (result.last_stage.empty() ? "" : " (after stage " + result.last_stage + ")");
    return finish();
  }
  const nlohmann::json& reply = *result.reply;
  if (!reply.value("ok", false)) {
    evaluation.error_class = reply.value("error_class", "runtime_error");
    evaluation.status = evaluation.error_class == "compile_failed" ? "compile_failed" : "runtime_error";
    evaluation.compiled = evaluation.status != "compile_failed";
    evaluation.error_message = reply.value("message", "");
    const std::string trace = reply.value("traceback_tail", "");
    if (!trace.empty()) evaluation.error_message += "\n" + trace;
    return finish();
  }
  evaluation.compiled = true;

  // Correctness: every trial's outputs, then the outputs of calls made after timing started.
  std::vector<std::pair<int, std::string>> checks;
  const auto& output_paths = reply.at("outputs");
  for (size_t t = 0; t < output_paths.size(); ++t) checks.emplace_back(static_cast<int>(t), output_paths[t].get<std::string>());
  if (reply.contains("timed_outputs"))
    for (const auto& [trial, path] : reply.at("timed_outputs").items()) checks.emplace_back(std::stoi(trial), path.get<std::string>());
  if (static_cast<int>(output_paths.size()) != settings_.trials) {
    evaluation.status = "runtime_error";
    evaluation.error_message = fmt::format("the candidate produced outputs for {} of {} trials", output_paths.size(), settings_.trials);
    return finish();
  }
  double max_abs = 0, mean_abs_sum = 0;
  for (size_t i = 0; i < checks.size(); ++i) {
    const auto& [trial, path] = checks[i];
    auto compared = (*ref)->call({{"type", "reference.compare"}, {"job", job}, {"trial", trial}, {"outputs_path", path}},
                                 settings_.reference_timeout);
    if (compared.failure != CallFailure::none) return make_error("the reference worker failed while comparing: " + compared.message);
    const nlohmann::json& c = *compared.reply;
    max_abs = std::max(max_abs, number(c, "max_abs_diff").value_or(0.0));
    mean_abs_sum += number(c, "mean_abs_diff").value_or(0.0);
    const std::string verdict = c.value("verdict", "output_mismatch");
    if (verdict != "correct") {
      evaluation.status = verdict;
      evaluation.failed_trial = trial;
      evaluation.error_class = verdict;
      evaluation.error_message = c.value("message", "") + (i >= output_paths.size() ? " (in a call made after timing started)" : "");
      evaluation.max_abs_diff = number(c, "max_abs_diff");
      evaluation.mean_abs_diff = number(c, "mean_abs_diff");
      return finish();
    }
  }
  evaluation.status = "correct";
  evaluation.correct = true;
  evaluation.max_abs_diff = max_abs;
  evaluation.mean_abs_diff = checks.empty() ? 0.0 : mean_abs_sum / static_cast<double>(checks.size());
  evaluation.runtime = timing_from(reply.at("timing"));
  auto base = baseline(job, problem_hash, &evaluation.baseline_measured);
  if (!base) return base.error();
  evaluation.baseline = *base;
  if (evaluation.runtime->median_ms > 0) evaluation.speedup = base->median_ms / evaluation.runtime->median_ms;
  if (evaluation.runtime->mean_ms > 0) evaluation.speedup_mean = base->mean_ms / evaluation.runtime->mean_ms;
  return finish();
}

}  // namespace dicebench::harness
