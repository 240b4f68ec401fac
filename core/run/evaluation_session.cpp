// The evaluation session: settings, preflight and review once for every entry point, and one warm
// evaluator per slot that batches share out.
#include "core/run/evaluation_session.hpp"

#include "core/base/sha256.hpp"
#include "core/host/evaluation_settings.hpp"
#include "core/host/log.hpp"
#include "core/host/plugin_registry.hpp"
#include "core/host/setting_names.hpp"
#include "harness/client/python_modules.hpp"
#include "harness/client/sandbox_launch.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <type_traits>

#include <unistd.h>

namespace dicebench::run {

Evaluation extraction_failed_evaluation(const std::string& device) {
  Evaluation evaluation;
  evaluation.verdict = Verdict::extraction_failed;
  evaluation.device = device;
  evaluation.error_class = std::string(verdict_name(Verdict::extraction_failed));
  evaluation.error_message = "the completion holds no code block";
  return evaluation;
}

// What one evaluate() call shares with the slots judging its pairs.
struct EvaluationSession::Batch {
  const EvaluationSession::OnResult* on_result = nullptr;
  size_t remaining = 0;  // pairs without a result (under mutex_)
  bool stopped = false;  // its caller stopped it: pairs not yet judged end as errors (under mutex_)
};

// One pair of a batch until its result is in.
struct EvaluationSession::Job {
  const Pair* pair = nullptr;
  uint64_t id = 0;  // the session's, for held_
  size_t index = 0;
  std::string problem_hash;
  ReviewFindings findings;
  Batch* batch = nullptr;
};

Result<std::unique_ptr<EvaluationSession>> EvaluationSession::open(const host::Config& config,
                                                                   const host::SuiteSession* suite,
                                                                   const std::optional<WorkerOverride>& workers) {
  auto ray = host::ray_settings(config);
  if (!ray) return ray.error();
  host::Config resolved = config;  // on a Ray cluster, the device is the cluster's GPUs unless named
  if (*ray && !config.get("eval.device")) resolved.set("eval.device", "cuda");
  auto settings = host::evaluation_settings(resolved);
  if (!settings) return settings.error();
  if (workers) {
    settings->worker_executable = workers->worker;
    settings->sandbox.executable = host::beside_worker(workers->worker, "dicebench-sandbox", "DICEBENCH_SANDBOX");
    settings->compile_executable = host::beside_worker(workers->worker, "dicebench-compile", "DICEBENCH_COMPILE");
    settings->warm_spares = workers->warm_spares;
  }
  if (*ray) return open_on_ray(**ray, resolved, std::move(*settings), suite);
  auto slots = host::evaluation_slots(config, settings->device, settings->timing);
  if (!slots) return slots.error();
  if (slots->empty()) return make_error("no evaluation slot: eval.gpus or eval.cpu_workers names none");
  // Which protections candidates get here (refused under require; each entry point says which).
  auto sandbox = harness::sandbox_status(settings->sandbox);
  if (!sandbox) return sandbox.error();
  // What the suite's candidates import must be there (a Triton run without triton).
  if (suite) {
    auto modules = suite->candidate_modules();
    if (!modules) return modules.error();
    auto missing = harness::missing_python_modules(*modules);
    if (!missing) return missing.error();
    if (!missing->empty())
      return make_error(fmt::format("{}'s candidates import {}, which the workers' Python ({}) lacks; install it there",
                                    suite->name(), fmt::join(*missing, ", "), harness::worker_python()));
  }
  auto session = std::unique_ptr<EvaluationSession>(new EvaluationSession());
  session->settings_ = std::move(*settings);
  // One pool of torch's toolchain builds for every slot: its limit is the machine's.
  if (!session->settings_.toolchain_builds)
    session->settings_.toolchain_builds =
        std::make_shared<harness::ToolchainBuilds>(harness::toolchain_build_settings(session->settings_));
  // CPU slots time the reference on the same cores: one baseline per problem for all of them.
  if (session->settings_.device == "cpu" && !session->settings_.shared_baselines)
    session->settings_.shared_baselines = std::make_shared<harness::OncePerKey<Timing>>();
  session->slots_ = std::move(*slots);
  // Evaluators sharing a GPU (eval.gpu_slots) share its gate.
  std::map<std::string, int> per_gpu;
  for (const auto& slot : session->slots_)
    if (slot) ++per_gpu[*slot];
  for (const auto& [gpu, count] : per_gpu)
    if (count > 1) session->device_gates_[gpu] = std::make_shared<harness::DeviceGate>(count);
  session->sandbox_json_ = sandbox->json();
  session->sandbox_summary_ = sandbox->summary();
  session->suite_ = suite;
  return session;
}

Result<std::unique_ptr<EvaluationSession>> EvaluationSession::open_on_ray(const host::RaySettings& ray,
                                                                          const host::Config& config,
                                                                          harness::EvaluationSettings settings,
                                                                          const host::SuiteSession* suite) {
  auto pool = RayPool::start(ray, config, settings);
  if (!pool) return pool.error();
  auto session = std::unique_ptr<EvaluationSession>(new EvaluationSession());
  session->settings_ = std::move(settings);
  session->slots_ = {std::nullopt};  // one slot: the pool shares its candidates out over its actors
  session->sandbox_json_ = (*pool)->sandbox_json();
  session->sandbox_summary_ = (*pool)->sandbox_summary();
  session->suite_ = suite;
  host::log_info("judging on the {}", (*pool)->description());
  session->ray_pool_ = std::move(*pool);
  return session;
}

Result<std::unique_ptr<EvaluationSession>> EvaluationSession::open_with_suite(
    const host::Config& config, const std::optional<WorkerOverride>& workers) {
  const std::string name = config.get("suite").value_or("");
  // The installed plugins; for workers from elsewhere (the Python module's), those of their install too.
  auto dirs = host::PluginRegistry::default_search_dirs();
  if (workers)
    dirs.push_back(
        (std::filesystem::path(workers->worker).parent_path() / ".." / "lib" / "dicebench" / "plugins").string());
  const auto& registry = host::PluginRegistry::installed(dirs);
  DICEBENCH_TRY(host::check_setting_names(config, registry));
  OwnedSuite owned;
  std::vector<std::string> opened;
  if (!name.empty()) {
    owned.config = std::make_unique<host::Config>(config);
    owned.services = std::make_unique<host::HostServices>(*owned.config);
    host::LoadedPlugin plugin;
    auto suite = host::SuiteSession::open_named(registry, name, *owned.services, plugin);
    if (!suite) return suite.error();
    owned.session.emplace(std::move(*suite));
    opened.push_back(plugin.info.name);
  }
  // Every setting is given explicitly here (no config file): one for a plugin not opened is unused.
  DICEBENCH_TRY(host::check_settings_asked(config, owned.services ? owned.services->asked() : std::set<std::string>{},
                                           opened,
                                           /*other_sections=*/false));
  auto session = open(config, owned.session ? &*owned.session : nullptr, workers);
  if (!session) return session.error();
  if (owned.session) {
    (*session)->owned_suite_ = std::move(owned);
    (*session)->suite_ = &*(*session)->owned_suite_.session;
  }
  if (const auto db = config.get("db")) {
    auto store = results::Store::open(*db, results::OpenMode::ReadOnly);
    if (!store) return store.error();
    (*session)->owned_store_.emplace(std::move(*store));
    (*session)->use_store(*(*session)->owned_store_, (*session)->owned_store_lock_, /*writable=*/false);
  }
  return session;
}

EvaluationSession::~EvaluationSession() { close(); }

const std::string& EvaluationSession::suite_name() const {
  static const std::string none;
  return suite_ ? suite_->name() : none;
}

Result<ReviewFindings> EvaluationSession::review(const std::optional<ProblemKey>& problem,
                                                 const std::string& problem_source,
                                                 const std::string& candidate) const {
  if (!suite_) return ReviewFindings{};
  const auto index = problem ? suite_->index_of(*problem) : std::nullopt;
  return index ? suite_->review(*index, candidate) : suite_->review_source(problem_source, candidate);
}

std::optional<ProblemKey> EvaluationSession::problem_key(const std::string& problem_hash) const {
  if (suite_)
    for (const auto& problem : suite_->problems())
      if (problem.content_hash == problem_hash) return problem.key();
  return std::nullopt;
}

void EvaluationSession::use_store(results::Store& store, std::mutex& lock, bool writable) {
  cache_store_ = &store;
  cache_lock_ = &lock;
  store_measured_ = writable;
}

void EvaluationSession::prime_baselines(const std::vector<SharedBaseline>& baselines) {
  std::lock_guard guard(*cache_lock_);
  caches_.give(baselines);
  sharing_baselines_ = true;
}

std::vector<SharedBaseline> EvaluationSession::measured_baselines() {
  std::lock_guard guard(*cache_lock_);
  return caches_.take_measured();
}

void EvaluationSession::evaluate(const std::vector<Pair>& batch, const OnResult& on_result,
                                 const std::function<bool()>& stopping) {
  Batch shared{&on_result, batch.size()};
  std::vector<Job> jobs(batch.size());
  // The suite's review first, in the caller's thread: it reads the candidate, never runs it.
  std::vector<size_t> refused;
  for (size_t i = 0; i < batch.size(); ++i) {
    Job& job = jobs[i];
    job.pair = &batch[i];
    job.index = i;
    job.batch = &shared;
    job.problem_hash = "sha256:" + sha256_hex(batch[i].problem_source);
    const auto key = batch[i].problem ? batch[i].problem : problem_key(job.problem_hash);
    Result<ReviewFindings> found = review(key, batch[i].problem_source, batch[i].candidate_source);
    if (found)
      job.findings = std::move(*found);
    else
      refused.push_back(i), on_result(i, found.error());
  }
  std::unique_lock lock(mutex_);
  shared.remaining -= refused.size();
  if (closed_) {
    for (Job& job : jobs)
      if (std::find(refused.begin(), refused.end(), job.index) == refused.end())
        on_result(job.index, make_error(ErrorKind::bad_input, "this evaluation session is closed"));
    return;
  }
  if (threads_.empty() && shared.remaining > 0) start_slots();
  for (Job& job : jobs)
    if (std::find(refused.begin(), refused.end(), job.index) == refused.end()) {
      job.id = next_job_id_++;
      queue_.push_back(&job);
    }
  changed_.notify_all();
  while (shared.remaining > 0) {
    if (!shared.stopped && stopping && stopping()) {
      // Pairs no slot has taken end here; those a slot took end there, as errors, once it sees the stop.
      shared.stopped = true;
      std::vector<size_t> dropped;
      for (auto it = queue_.begin(); it != queue_.end();) {
        if ((*it)->batch != &shared) {
          ++it;
          continue;
        }
        dropped.push_back((*it)->index);
        it = queue_.erase(it);
      }
      lock.unlock();
      for (const size_t index : dropped)
        on_result(index, make_error(ErrorKind::cancelled, "stopped before it was judged"));
      lock.lock();
      shared.remaining -= dropped.size();
      changed_.notify_all();
      continue;
    }
    changed_.wait_for(lock, std::chrono::milliseconds(100));
  }
}

std::vector<Result<Evaluation>> EvaluationSession::evaluate(const std::vector<Pair>& batch) {
  std::vector<std::optional<Result<Evaluation>>> results(batch.size());
  evaluate(batch, [&](size_t index, Result<Evaluation> result) { results[index] = std::move(result); });
  std::vector<Result<Evaluation>> out;
  out.reserve(batch.size());
  for (auto& result : results) out.push_back(std::move(*result));
  return out;
}

void EvaluationSession::start_slots() {
  busy_since_.assign(slots_.size(), std::nullopt);
  for (size_t i = 0; i < slots_.size(); ++i) threads_.emplace_back([this, i] { run_slot(i, slots_[i]); });
}

// How long a slot's device must have been on one candidate before its waiting jobs may move: an
// untimed check takes well under a second; a hang, or a candidate run to its limit, far longer.
constexpr auto kTakeOverAfter = std::chrono::seconds(5);

EvaluationSession::Job* EvaluationSession::take_over(size_t index) {
  const auto now = std::chrono::steady_clock::now();
  Held* oldest = nullptr;
  for (auto& [id, held] : held_) {
    const auto& busy = busy_since_[held.slot];
    // Not begun, and either not started either (nothing done there is lost) or behind a long one.
    if (held.slot == index || held.started || (held.launched && (!busy || now - *busy < kTakeOverAfter))) continue;
    if (!oldest || held.since < oldest->since) oldest = &held;
  }
  if (!oldest) return nullptr;
  oldest->slot = index;
  oldest->launched = false;
  oldest->since = now;
  return oldest->job;
}

// The slot's evaluator takes queued pairs while it wants more (its room ahead of the device) and
// hands each verdict to its batch's callback as it is final; idle, it takes over a pair another
// slot took and has not started a worker for, or has not begun while that slot's device has been on
// one candidate for kTakeOverAfter (a hang holds only its own slot, not the pairs loaded behind it
// there); before the device judges a
// problem, the evaluator gets what the store holds of it, and after, what the evaluation measured is stored (a writable
// store). It ends once the session closes with nothing left.
void EvaluationSession::run_slot(size_t index, const std::optional<std::string>& slot) {
  if (ray_pool_) return judge_on(index, slot, *ray_pool_);
  harness::EvaluationSettings mine = settings_;
  mine.visible_devices = slot;
  if (slot && device_gates_.count(*slot)) mine.device_gate = device_gates_.at(*slot);
  harness::Evaluator evaluator(mine);
  judge_on(index, slot, evaluator);
  evaluator.set_launch_claim({});  // it asks what judge_on kept, which is gone
}

template <class SlotEvaluator>
void EvaluationSession::judge_on(size_t index, const std::optional<std::string>& slot, SlotEvaluator& evaluator) {
  constexpr bool local = std::is_same_v<SlotEvaluator, harness::Evaluator>;  // else the Ray pool
  ++evaluators_started_;
  evaluator.start_reference();
  // Where each verdict was reached, for its record (the Ray pool's actors say so in theirs).
  static const std::string host_name = [] {
    char name[256] = {};
    return gethostname(name, sizeof name - 1) == 0 ? std::string(name) : std::string();
  }();
  std::optional<std::string> gpu_name;  // this slot's, once its reference has said
  const auto judged_here = [&](Evaluation& evaluation) {
    if constexpr (local) {
      evaluation.host = host_name;
      if (!slot) return;
      if (!gpu_name) {
        auto info = evaluator.reference_info();
        gpu_name = info ? info->value("device_name", "") : "";
      }
      evaluation.gpu = fmt::format("{}#{}", *gpu_name, *slot);
    }
  };
  // By tag: the jobs submitted to this evaluator, each with its id. A job another slot took over
  // (held_ names that slot) is dropped here and never read again: its batch may be gone.
  std::map<int64_t, std::pair<Job*, uint64_t>> submitted;
  int64_t next_tag = 0;
  const auto held_here = [&](uint64_t id) {  // under mutex_
    const auto found = held_.find(id);
    return found != held_.end() && found->second.slot == index;
  };
  // Jobs taken over elsewhere: withdrawn from this evaluator (their workers end) and forgotten.
  const auto forget_moved = [&] {
    std::vector<int64_t> moved;
    {
      std::lock_guard guard(mutex_);
      for (auto it = submitted.begin(); it != submitted.end();) {
        if (held_here(it->second.second)) {
          ++it;
          continue;
        }
        moved.push_back(it->first);
        it = submitted.erase(it);
      }
    }
    for (const int64_t tag : moved) evaluator.withdraw(tag);  // outside the lock: a worker may take a moment to end
  };
  // The device is about to judge it here: from now on the jobs waiting behind it here may move (a
  // slot that is only loading its candidates holds nothing another could do sooner: taken over
  // then, a job whose load outlasts kTakeOverAfter went from slot to slot and was never judged).
  const auto claim = [&](int64_t tag) {
    std::lock_guard guard(mutex_);
    const auto found = submitted.find(tag);
    if (found == submitted.end() || !held_here(found->second.second)) return false;
    held_.at(found->second.second).started = true;
    if (!busy_since_[index]) busy_since_[index] = std::chrono::steady_clock::now();
    return true;
  };
  // Its worker is about to start here: from now on it moves only from behind a long one.
  if constexpr (local) {
    evaluator.set_launch_claim([&](int64_t tag) {
      std::lock_guard guard(mutex_);
      const auto found = submitted.find(tag);
      if (found == submitted.end() || !held_here(found->second.second)) return false;
      held_.at(found->second.second).launched = true;
      return true;
    });
  }
  std::map<std::string, CacheKeys> keys;  // by problem hash, once given the stored caches
  std::set<std::string> to_prime;         // problems submitted here and not yet given them
  const auto finish = [&](Job& job, Result<Evaluation> result) {
    {
      std::lock_guard guard(mutex_);
      held_.erase(job.id);
    }
    if (result) {
      judged_here(*result);
      for (auto& finding : job.findings) result->flags.push_back(std::move(finding));
      if (keys.count(job.problem_hash) && (store_measured_ || sharing_baselines_)) {
        std::lock_guard guard(*cache_lock_);
        if (sharing_baselines_) caches_.keep_measured(keys.at(job.problem_hash), *result);
        if (store_measured_) {
          if (auto stored = store_measured(*cache_store_, keys.at(job.problem_hash), *result); !stored)
            result = stored.error();
        }
      }
    }
    (*job.batch->on_result)(job.index, std::move(result));
    std::lock_guard guard(mutex_);
    --job.batch->remaining;
    changed_.notify_all();
  };
  const auto stopping = [&] {
    if (host::HostServices::cancel_requested()) return true;
    std::lock_guard guard(mutex_);
    bool any = false;
    for (const auto& [tag, entry] : submitted) {
      if (!held_here(entry.second)) continue;
      if (!entry.first->batch->stopped) return false;
      any = true;
    }
    return any;  // every pair here is of a stopped batch
  };
  while (true) {
    Job* job = nullptr;
    {
      std::unique_lock lock(mutex_);
      // Idle, it looks again each second for a job that waits behind another slot's long one.
      changed_.wait_for(lock, std::chrono::seconds(1),
                        [&] { return closed_ || !queue_.empty() || !submitted.empty(); });
      if (closed_ && queue_.empty() && submitted.empty()) return;
      if (!queue_.empty() && (submitted.empty() || evaluator.wants_more())) {
        job = queue_.front();
        queue_.pop_front();
        held_[job->id] = Held{job, index, false, false, std::chrono::steady_clock::now()};
      } else if (queue_.empty() && submitted.empty()) {
        job = take_over(index);  // idle: a job waiting behind another slot's long one
      }
    }
    if (job) {  // and look for more while the evaluator has room
      if ((cache_store_ || sharing_baselines_) && !keys.count(job->problem_hash)) to_prime.insert(job->problem_hash);
      submitted[next_tag] = {job, job->id};
      evaluator.submit({next_tag++, job->pair->problem_source, job->problem_hash, job->pair->candidate_source});
      continue;
    }
    forget_moved();
    if (submitted.empty()) continue;
    // Before the device judges a problem, what runs stored of it and the baselines given for it (a
    // read failure only costs time).
    if constexpr (local) {  // (the Ray pool's driver gives its actors theirs)
      for (const auto& hash : to_prime) {
        auto found = cache_keys(evaluator, hash);
        if (!found) {
          host::log_warn("the stored baselines and traits could not be read ({}); they are measured",
                         found.error().message);
          continue;
        }
        std::lock_guard guard(*cache_lock_);
        if (auto primed = caches_.prime(cache_store_, evaluator, slot.value_or("cpu"), *found); !primed)
          host::log_warn("the stored baselines and traits could not be read ({}); they are measured",
                         primed.error().message);
        keys.emplace(hash, std::move(*found));
      }
    }
    to_prime.clear();
    auto finished = evaluator.next(stopping, claim);
    {
      std::lock_guard guard(mutex_);
      busy_since_[index].reset();
    }
    if (!finished) {
      forget_moved();  // every one left here was taken over: nothing is stopped
      if (!stopping()) continue;
      for (auto& [tag, pending] : submitted)  // stopped: what was pending here is dropped
        finish(*pending.first, make_error(ErrorKind::cancelled, "stopped before it was judged"));
      submitted.clear();
      continue;
    }
    Job* done = submitted.at(finished->tag).first;
    submitted.erase(finished->tag);
    finish(*done, std::move(finished->evaluation));
  }
}

void EvaluationSession::close() {
  {
    std::lock_guard guard(mutex_);
    closed_ = true;
    changed_.notify_all();
  }
  for (auto& thread : threads_)
    if (thread.joinable()) thread.join();
}

}  // namespace dicebench::run
