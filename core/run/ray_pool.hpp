// The evaluation session's slot on a Ray cluster (dicebench run --ray, dicebench serve --ray): the
// bridge process `python -m dicebench._ray_bridge`, started and spoken to as a worker is (framed
// JSON, harness/PROTOCOL.md), holds a dicebench.ray.EvaluatorPool whose actors, one per GPU of the
// cluster, judge with this host's own [eval] settings. The session's one evaluation loop drives it
// through the same calls it makes of a local harness::Evaluator (submit while it wants more, next
// for each final result), so every front end's storing, review and resume work unchanged; the
// verdicts come back as the actors' Evaluation records, with the host and GPU that judged each.
#pragma once

#include "core/base/result.hpp"
#include "core/host/config.hpp"
#include "core/host/evaluation_settings.hpp"
#include "harness/client/evaluator.hpp"
#include "harness/client/worker_process.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>

namespace dicebench::run {

class RayPool {
 public:
  // Starts the bridge, which joins the cluster at ray.address and starts its actors with the
  // config's [eval] settings (the Ray keys aside), and waits until they have started: an error
  // (one line) when the cluster cannot be reached or has no room for them.
  static Result<std::unique_ptr<RayPool>> start(const host::RaySettings& ray, const host::Config& config,
                                                const harness::EvaluationSettings& settings);
  ~RayPool();
  RayPool(const RayPool&) = delete;
  RayPool& operator=(const RayPool&) = delete;

  // The actors' sandbox ({"mode", "protections"}, as eval --json has it) and its one-line summary.
  const std::string& sandbox_json() const { return sandbox_json_; }
  const std::string& sandbox_summary() const { return sandbox_summary_; }
  // "Ray pool of 8 actor(s) on 2 node(s) (gpu-a, gpu-b) at HOST:PORT".
  const std::string& description() const { return description_; }

  // What the session's slot calls of an evaluator (harness::Evaluator's meanings).
  void start_reference() {}
  bool wants_more() const { return !failure_.empty() || pending_.size() < capacity_; }
  void submit(harness::Evaluator::Submission submission);
  // The next result in the order the pool's tasks end; nullopt with nothing pending or once
  // `stopping` says so (the bridge and its actors then end; what was pending is dropped). Every
  // claim is granted: the pool is the session's only slot.
  std::optional<harness::Evaluator::Finished> next(const std::function<bool()>& stopping,
                                                   const std::function<bool(int64_t)>& claim = {});
  bool withdraw(int64_t) { return false; }

 private:
  RayPool() = default;
  // The pool's failure, and the pending submissions' errors from now on.
  void fail(std::string message);

  std::unique_ptr<harness::WorkerProcess> bridge_;
  std::set<int64_t> pending_;
  size_t capacity_ = 1;
  std::string failure_;
  std::string sandbox_json_, sandbox_summary_, description_;
};

}  // namespace dicebench::run
