// Starting candidate workers: spawned in their sandboxes with their job folders, each with a
// thread that sends its candidate.load and receives the reply (serving its compile requests on the
// way); prefetched candidates and warm spares.
#include "harness/client/evaluation_parts.hpp"

#include "core/base/sha256.hpp"
#include "core/spec/protocol.hpp"
#include "harness/client/compile_service.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace dicebench::harness {

using namespace parts;

void Evaluator::Candidate::note_toolchain(const ToolchainOutcome& outcome) {
  if (outcome.kind == ToolchainOutcome::Kind::declined) return;
  ++toolchain_builds;
  if (outcome.cache_hit) ++toolchain_cache_hits;
  if (outcome.with_header) ++toolchain_with_header;
  if (outcome.kind == ToolchainOutcome::Kind::failed) ++toolchain_failures;
  toolchain_queued_seconds += outcome.queued_seconds;
  toolchain_build_seconds += outcome.build_seconds;
}

void Evaluator::Candidate::charge_toolchain_timeout(CallResult& result) const {
  if (toolchain_timeout.empty() || result.failure == CallFailure::none) return;
  result.failure = CallFailure::timeout;
  result.message = toolchain_timeout;
}

nlohmann::json Evaluator::Candidate::toolchain_use() const {
  if (!toolchain_builds) return nullptr;
  return {{"builds", toolchain_builds},
          {"cache_hits", toolchain_cache_hits},
          {"failures", toolchain_failures},
          {"with_header", toolchain_with_header},
          {"queued_seconds", toolchain_queued_seconds},
          {"build_seconds", toolchain_build_seconds}};
}

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
  options.environment.insert(options.environment.end(), {{"TORCH_EXTENSIONS_DIR", job_dir + "/torch_extensions"},
                                                         {"TRITON_CACHE_DIR", job_dir + "/triton"},
                                                         {"CUDA_CACHE_PATH", job_dir + "/nv_compute_cache"},
                                                         {"XDG_CACHE_HOME", job_dir + "/cache"}});
  // The sandbox hides the other jobs' folders (and the reference's logs) beside this one.
  if (settings_.sandbox.mode != "off")
    options.launcher = sandbox_command(settings_.sandbox, job_dir, {work_root_of(settings_.work_root)});
  auto worker = WorkerProcess::spawn(options);
  if (!worker)
    c->start_error = worker.error().message;
  else
    c->worker = std::move(*worker);
  return c;
}

// Serves a candidate's requests for compiles: the fast path's (candidate.compile, answered by the
// trusted compile step within the candidate's compile time) and torch's toolchain's
// (candidate.toolchain, answered by the toolchain pool, whose time is its own: the candidate is
// marked as waiting on it meanwhile, and a build past the pool's time limit ends the candidate with
// a timeout, as a build past the compile time limit in its own process did).
WorkerRequestHandler Evaluator::compile_requests(Candidate& candidate, std::chrono::steady_clock::time_point deadline) {
  const CompileService service{settings_.compile_executable, settings_.fastpath_cache, settings_.sandbox};
  ToolchainBuilds* builds = toolchain_.get();
  const double limit_s = std::chrono::duration<double>(settings_.toolchain_timeout).count();
  return
      [&candidate, service, builds, deadline, limit_s](const nlohmann::json& message) -> std::optional<WorkerAnswer> {
        const std::string type = message.value("type", "");
        const nlohmann::json request = message.value("request", nlohmann::json());
        if (type == protocol::reply::kCandidateCompile)
          return WorkerAnswer(protocol::CompileResult{.job = message.value("job", ""),
                                                      .outcome = compile_for_candidate(request, service, deadline)}
                                  .to_json());
        if (type != protocol::reply::kCandidateToolchain) return std::nullopt;
        // What one candidate's builds may take together (their waits are not its compile time, so a
        // candidate asking for build after build must meet a limit of their own).
        ToolchainOutcome outcome;
        if (candidate.toolchain_build_seconds >= limit_s ||
            candidate.toolchain_requests >= kToolchainRequestsPerCandidate) {
          outcome.kind = ToolchainOutcome::Kind::timed_out;
          outcome.message = fmt::format("torch's toolchain: the candidate's builds ran past {:.0f} s or {} calls",
                                        limit_s, kToolchainRequestsPerCandidate);
        } else {
          ++candidate.toolchain_requests;
          candidate.toolchain_waiting = true;
          outcome = builds->build(request, candidate.job);
          candidate.toolchain_waiting = false;
        }
        candidate.note_toolchain(outcome);
        if (outcome.kind == ToolchainOutcome::Kind::timed_out) {
          candidate.toolchain_timeout = outcome.message;
          candidate.worker->signal_kill();  // the candidate's call then ends, charged as a timeout
        }
        return WorkerAnswer(
            protocol::ToolchainResult{.job = message.value("job", ""), .outcome = outcome.answer()}.to_json(),
            /*time_counts=*/false);
      };
}

std::unique_ptr<Evaluator::Candidate> Evaluator::launch(const std::string& problem_source,
                                                        const std::string& candidate_source, bool fastpath) {
  std::unique_ptr<Candidate> c;
  while (!spares_.empty() && !c) {
    if (spares_.front()->worker && spares_.front()->worker->alive()) c = std::move(spares_.front());
    spares_.pop_front();
  }
  if (!c) c = spawn_candidate();
  c->source_hash = sha256_hex(candidate_source);
  c->fastpath = settings_.device == "cuda" && fastpath;
  c->builds = toolchain_.get();
  c->started = std::chrono::steady_clock::now();  // the compile time limit counts from the load
  if (!c->worker) return c;
  // The candidate compiles nothing itself: its load_inline calls come back as compile requests
  // (the fast path's), or as build requests where they take torch's toolchain. The problem's source
  // (public: the prompt shows it) runs first in the candidate's namespace, as KernelBench runs it.
  protocol::CandidateLoad request{.job = c->job,
                                  .problem_source = problem_source,
                                  .candidate_source = candidate_source,
                                  .device = settings_.device,
                                  .work_dir = c->folder->path.string(),
                                  .toolchain = {{"service", true}}};
  if (c->fastpath) request.fastpath = {{"cache_dir", settings_.fastpath_cache}, {"service", true}};
  nlohmann::json load = request.to_json();
  Candidate* candidate = c.get();
  const auto deadline = c->started + settings_.compile_timeout;
  // The loader sends the load too: a worker reads it once torch is imported, and a candidate larger
  // than the pipe holds would keep the launching thread (the device's) waiting until then.
  candidate->loader =
      std::thread([this, candidate, deadline, load = std::move(load), requests = compile_requests(*c, deadline)] {
        CallResult loaded;
        if (!candidate->worker->send(load)) {
          loaded.failure = CallFailure::crashed;
          loaded.message = "the candidate worker ended before it read its request";
        } else {
          // The compile time limit counts from the load; a build with torch's toolchain has its own.
          loaded = candidate->worker->receive(std::max(remaining(deadline), std::chrono::milliseconds(1)), requests);
          candidate->charge_toolchain_timeout(loaded);
        }
        candidate->loaded = std::move(loaded);
        candidate->load_done = true;
        std::lock_guard guard(ready_mutex_);
        ready_signal_.notify_all();
      });
  return c;
}

void Evaluator::await_load(Candidate& c) {
  if (c.loader.joinable()) c.loader.join();
}

void Evaluator::top_up_spares() {
  while (static_cast<int>(spares_.size()) < settings_.warm_spares) spares_.push_back(spawn_candidate());
}

}  // namespace dicebench::harness
