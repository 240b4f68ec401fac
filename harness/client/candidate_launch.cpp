// Starting candidate workers: spawned in their sandboxes with their job folders, sent their
// candidate.load at once, their loads received (and their compile requests served) by a thread
// each; prefetched candidates and warm spares.
#include "harness/client/evaluation_parts.hpp"

#include "core/base/sha256.hpp"
#include "harness/client/compile_service.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace dicebench::harness {

using namespace parts;

std::unique_ptr<Evaluator::Candidate> Evaluator::spawn_candidate() {
  auto c = std::make_unique<Candidate>();
  c->job = fmt::format("job-{}", ++next_job_);
  c->folder = std::make_unique<JobFolder>(settings_.work_root, settings_.keep_jobs);
  if (c->folder->path.empty()) {
    c->start_error = "cannot create a job folder under " + work_root_of(settings_.work_root);
    return c;
  }
  const std::string job_dir = c->folder->path.string();
  WorkerOptions options{settings_.worker_executable, "candidate", settings_.device, job_dir + "/candidate.log",
                        settings_.visible_devices};
  options.start_timeout = settings_.compile_timeout;
  // Every cache a candidate's tools write lives in its own job folder: torch's extension builds
  // (so two candidates' "fused_ops" never meet), Triton's, the CUDA driver's JIT cache.
  options.environment = worker_environment(settings_.device);
  options.environment.insert(options.environment.end(),
                             {{"TORCH_EXTENSIONS_DIR", job_dir + "/torch_extensions"}, {"TRITON_CACHE_DIR", job_dir + "/triton"},
                              {"CUDA_CACHE_PATH", job_dir + "/nv_compute_cache"}, {"XDG_CACHE_HOME", job_dir + "/cache"}});
  // The sandbox hides the other jobs' folders (and the reference's logs) beside this one.
  if (settings_.sandbox.mode != "off")
    options.launcher = sandbox_command(settings_.sandbox, job_dir, {work_root_of(settings_.work_root)});
  auto worker = WorkerProcess::spawn(options);
  if (!worker) c->start_error = worker.error().message;
  else c->worker = std::move(*worker);
  return c;
}

std::unique_ptr<Evaluator::Candidate> Evaluator::launch(const std::string& candidate_source, bool fastpath) {
  std::unique_ptr<Candidate> c;
  while (!spares_.empty() && !c) {
    if (spares_.front()->worker && spares_.front()->worker->alive()) c = std::move(spares_.front());
    spares_.pop_front();
  }
  if (!c) c = spawn_candidate();
  c->source_hash = sha256_hex(candidate_source);
  c->started = std::chrono::steady_clock::now();  // the compile time limit counts from the load
  if (!c->worker) return c;
  nlohmann::json load = {{"type", "candidate.load"}, {"job", c->job}, {"candidate_source", candidate_source},
                         {"device", settings_.device}, {"work_dir", c->folder->path.string()}};
  // The candidate compiles nothing itself: its load_inline calls come back as compile requests.
  if (settings_.device == "cuda" && fastpath)
    load["fastpath"] = {{"cache_dir", settings_.fastpath_cache}, {"service", true}};
  if (!c->worker->send(load)) {
    CallResult failed;
    failed.failure = CallFailure::crashed;
    failed.message = "the candidate worker ended before it read its request";
    c->loaded = std::move(failed);
    c->load_done = true;
    return c;
  }
  Candidate* candidate = c.get();
  const auto deadline = c->started + settings_.compile_timeout;
  const CompileService service{settings_.compile_executable, settings_.fastpath_cache, settings_.sandbox};
  candidate->loader = std::thread([candidate, deadline, service] {
    const auto compile = [&](const nlohmann::json& message) -> std::optional<nlohmann::json> {
      if (message.value("type", "") != "candidate.compile") return std::nullopt;
      return nlohmann::json{{"type", "compile.result"}, {"job", message.value("job", "")},
                            {"outcome", compile_for_candidate(message.value("request", nlohmann::json()), service, deadline)}};
    };
    candidate->loaded = candidate->worker->receive(std::max(remaining(deadline), std::chrono::milliseconds(1)), compile);
    candidate->load_done = true;
  });
  return c;
}

void Evaluator::await_load(Candidate& c) {
  if (c.loader.joinable()) c.loader.join();
}

void Evaluator::top_up_spares() {
  while (static_cast<int>(spares_.size()) < settings_.warm_spares) spares_.push_back(spawn_candidate());
}

void Evaluator::prefetch(const std::string& candidate_source) {
  queued_.push_back(candidate_source);
  launch_ahead();
}

Evaluator::LoadState Evaluator::load_state(const std::string& candidate_source) {
  const std::string hash = sha256_hex(candidate_source);
  const auto found = std::find_if(ahead_.begin(), ahead_.end(), [&](const auto& c) { return c->source_hash == hash; });
  if (found == ahead_.end()) return LoadState::queued;
  Candidate& c = **found;
  if (c.load_done || !c.worker || remaining(c.started + settings_.compile_timeout).count() <= 0) return LoadState::ready;
  return LoadState::loading;
}

void Evaluator::launch_ahead() {
  while (static_cast<int>(ahead_.size()) < settings_.prefetch && !queued_.empty()) {
    ahead_.push_back(launch(queued_.front(), settings_.fastpath));
    queued_.pop_front();
  }
}

}  // namespace dicebench::harness
