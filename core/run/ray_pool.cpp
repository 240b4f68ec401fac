// The evaluation session's slot on a Ray cluster: the bridge process, its frames, and the actors'
// Judgements read back as Evaluation records.
#include "core/run/ray_pool.hpp"

#include "core/spec/protocol.hpp"
#include "harness/client/evaluation_parts.hpp"
#include "harness/client/frame_io.hpp"
#include "harness/client/python_modules.hpp"
#include "harness/sandbox/sandbox_report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

namespace dicebench::run {
namespace {

namespace fs = std::filesystem;

// How long the bridge may go without a result while candidates are out: every candidate has its own
// limits on the actors, so this only catches a pool that stopped answering.
constexpr auto kNoResultLimit = std::chrono::hours(1);
// The pool's start-up: Ray joining, and every actor's Evaluator started.
constexpr auto kStartLimit = std::chrono::minutes(15);

// The [eval] settings the actors get: every one given, the Ray pool's own aside.
nlohmann::json actor_settings(const host::Config& config, const std::string& device) {
  nlohmann::json settings = nlohmann::json::object();
  for (const auto& [key, value] : config.values())
    if (key.starts_with("eval.") && !key.starts_with("eval.ray")) settings[key] = value;
  settings["eval.device"] = device;
  return settings;
}

// The sandbox report an actor's Evaluator gave, as the session reports its own.
std::string sandbox_summary_of(const nlohmann::json& sandbox) {
  if (sandbox.value("mode", "") == "off") return "off (eval.sandbox=off)";
  sandbox::Report report;
  const nlohmann::json protections = sandbox.value("protections", nlohmann::json::object());
  for (const auto& [name, state] : protections.items())
    report.set(name, state.value("active", false), state.value("detail", ""));
  return report.summary();
}

}  // namespace

Result<std::unique_ptr<RayPool>> RayPool::start(const host::RaySettings& ray, const host::Config& config,
                                                const harness::EvaluationSettings& settings) {
  auto pool = std::unique_ptr<RayPool>(new RayPool());
  const fs::path package = fs::path(settings.worker_executable).parent_path() / ".." / "lib" / "dicebench" / "python";
  const std::string log = (fs::path(harness::parts::work_root_of(settings.work_root)) /
                           fmt::format("dicebench-ray-bridge-{}.log", static_cast<long>(getpid())))
                              .string();
  const char* python_path = std::getenv("PYTHONPATH");
  harness::WorkerOptions options;
  options.launcher = {harness::worker_python(), "-m"};
  options.executable = "dicebench._ray_bridge";
  options.role = "ray_pool";
  options.device = settings.device;
  options.log_path = log;
  options.start_timeout = kStartLimit;
  options.environment = {
      {"PYTHONPATH", fs::weakly_canonical(package).string() + (python_path ? std::string(":") + python_path : "")},
      {"DICEBENCH_RAY_ADDRESS", ray.address},
      {"DICEBENCH_RAY_ACTORS", std::to_string(ray.actors)},
      {"DICEBENCH_RAY_RESOURCE", ray.resource},
      {"DICEBENCH_RAY_SETTINGS", actor_settings(config, settings.device).dump()}};
  auto bridge = harness::WorkerProcess::start(options);
  if (!bridge)
    return make_error(ErrorKind::failed, fmt::format("the Ray pool at {} did not start: {} (its log: {})", ray.address,
                                                     bridge.error().message, log));
  pool->bridge_ = std::move(*bridge);
  // Right after its hello: the actors, their hosts, capacity and sandbox.
  auto ready = pool->bridge_->receive(kStartLimit);
  if (!ready.reply || ready.reply->value("type", "") != "ray.pool")
    return make_error(
        ErrorKind::failed,
        fmt::format("the Ray pool at {} did not start: {} (its log: {})", ray.address,
                    ready.reply ? "it sent " + ready.reply->value("type", "?") + " first" : ready.message, log));
  const nlohmann::json& info = *ready.reply;
  pool->capacity_ = std::max<size_t>(1, info.value("capacity", 1));
  nlohmann::json sandbox = info.value("sandbox", nlohmann::json::object());
  pool->sandbox_json_ = sandbox.dump();
  pool->sandbox_summary_ = sandbox_summary_of(sandbox) + " (on the Ray pool's actors)";
  pool->description_ =
      fmt::format("Ray pool of {} actor(s) on {} node(s) ({}) at {}", info.value("actors", 0), info.value("nodes", 0),
                  fmt::join(info.value("hosts", std::vector<std::string>{}), ", "), ray.address);
  return pool;
}

RayPool::~RayPool() {
  if (!bridge_ || !bridge_->alive()) return;
  // The bridge ends its actors (each Evaluator's workers with them) and exits; its output closing
  // ends the wait (killed after a minute).
  if (bridge_->send(protocol::Shutdown{}.to_json())) (void)bridge_->receive(std::chrono::minutes(1));
  bridge_->kill();
}

void RayPool::fail(std::string message) {
  if (failure_.empty()) failure_ = std::move(message);
  if (bridge_ && bridge_->alive()) bridge_->kill();
}

void RayPool::submit(harness::Evaluator::Submission submission) {
  pending_.insert(submission.tag);
  if (!failure_.empty()) return;  // next() answers it with the failure
  if (!bridge_->send(
          protocol::RayJudge{std::to_string(submission.tag), submission.problem_source, submission.candidate_source}
              .to_json()))
    fail("the Ray pool's bridge ended");
}

std::optional<harness::Evaluator::Finished> RayPool::next(const std::function<bool()>& stopping,
                                                          const std::function<bool(int64_t)>&) {
  if (pending_.empty()) return std::nullopt;
  auto deadline = std::chrono::steady_clock::now() + kNoResultLimit;
  while (failure_.empty()) {
    if (stopping && stopping()) {
      // What is pending is dropped here; its results, when they come, are not read as anyone's.
      pending_.clear();
      return std::nullopt;
    }
    if (!bridge_->readable(harness::kIdleInterval)) {
      if (std::chrono::steady_clock::now() > deadline)
        fail(fmt::format("the Ray pool sent no result for {} h", kNoResultLimit.count()));
      continue;
    }
    auto received = bridge_->receive(std::chrono::minutes(1));  // the frame is there, or the bridge ended
    if (!received.reply) {
      fail(fmt::format("the Ray pool failed: {}", received.message));
      break;
    }
    deadline = std::chrono::steady_clock::now() + kNoResultLimit;
    const nlohmann::json& message = *received.reply;
    if (message.value("type", "") != "ray.judged") {
      fail(fmt::format("the Ray pool's bridge sent {} where a result belongs", message.value("type", "?")));
      break;
    }
    int64_t tag = 0;
    try {
      tag = std::stoll(message.value("job", ""));
    } catch (const std::exception&) {
      fail("the Ray pool's bridge sent a result without its job");
      break;
    }
    if (!pending_.erase(tag)) continue;  // one dropped when its batch stopped
    const nlohmann::json judgement = message.value("judgement", nlohmann::json::object());
    const std::string status = judgement.value("status", "");
    if (status != "judged" || !judgement.contains("evaluation") || judgement["evaluation"].is_null())
      return harness::Evaluator::Finished{
          tag, make_error(status == "problem_failed" ? ErrorKind::problem_failed : ErrorKind::harness_failure,
                          judgement.value("error", "the Ray pool's actor judged nothing"))};
    try {
      return harness::Evaluator::Finished{tag, judgement["evaluation"].get<Evaluation>()};
    } catch (const nlohmann::json::exception& error) {
      return harness::Evaluator::Finished{
          tag, make_error(ErrorKind::protocol_breach, fmt::format("an actor's evaluation record: {}", error.what()))};
    }
  }
  // The pool failed: each pending submission gets its error, one per call.
  const int64_t tag = *pending_.begin();
  pending_.erase(pending_.begin());
  return harness::Evaluator::Finished{tag, make_error(ErrorKind::harness_failure, failure_)};
}

}  // namespace dicebench::run
