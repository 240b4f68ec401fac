// One dicebench-worker process seen from the host (Boost.Process, own process group): started,
// spoken to, ended (shutdown, then killed) or killed.
#include "harness/client/worker_process.hpp"

#include <algorithm>

#include "core/spec/protocol.hpp"
#include "harness/client/frame_io.hpp"
#include "harness/client/worker_message.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/wait.h>
#include <boost/process.hpp>

#include <csignal>
#include <cstring>
#include <mutex>

namespace dicebench::harness {

namespace bp = boost::process;

struct WorkerProcess::State {
  bp::pipe to_worker;
  bp::pipe from_worker;
  bp::group group;
  bp::child child;
  std::string role;
};

WorkerProcess::WorkerProcess(std::unique_ptr<State> state) : state_(std::move(state)) {}

WorkerProcess::~WorkerProcess() { kill(); }

Result<std::unique_ptr<WorkerProcess>> WorkerProcess::start(const WorkerOptions& options) {
  auto worker = spawn(options);
  if (!worker) return worker.error();
  DICEBENCH_TRY((*worker)->await_hello());
  return worker;
}

Result<std::unique_ptr<WorkerProcess>> WorkerProcess::spawn(const WorkerOptions& options) {
  std::signal(SIGPIPE, SIG_IGN);  // a dead worker must not take the host down with it
  // One spawn at a time, and the host's pipe ends close on exec: a worker started from another
  // thread would otherwise inherit this worker's pipes, and keep its output open after it died
  // (its crash would then look like a hang).
  static std::mutex spawning;
  const std::lock_guard lock(spawning);
  auto state = std::make_unique<State>();
  state->role = options.role;
  bp::environment env = boost::this_process::environment();
  if (options.visible_devices) env["CUDA_VISIBLE_DEVICES"] = *options.visible_devices;
  env["PYTHONUNBUFFERED"] = "1";
  for (const auto& [name, value] : options.environment) env[name] = value;
  std::vector<std::string> command = options.launcher;
  for (const std::string& arg : {options.executable, std::string("--role"), options.role, std::string("--device"),
                                 options.device, std::string("--log"), options.log_path})
    command.push_back(arg);
  const std::string program = command.front();
  command.erase(command.begin());
  std::error_code ec;
  state->child = bp::child(program, bp::args(command), bp::std_in<state->to_worker, bp::std_out> state->from_worker,
                           bp::std_err > options.log_path, state->group, env, ec);
  if (ec) return make_error(fmt::format("cannot start {}: {}", program, ec.message()));
  // Boost.Process closed the parent's copies of the child's ends; forget their numbers so the
  // pipes' destructors do not close them a second time.
  state->to_worker.assign_source(-1);
  state->from_worker.assign_sink(-1);
  fcntl(state->to_worker.native_sink(), F_SETFD, FD_CLOEXEC);
  fcntl(state->from_worker.native_source(), F_SETFD, FD_CLOEXEC);
  std::unique_ptr<WorkerProcess> worker(new WorkerProcess(std::move(state)));
  worker->options_ = options;
  return worker;
}

Result<void> WorkerProcess::await_hello() {
  if (!hello_.is_null()) return {};
  const WorkerOptions& options = options_;
  std::string payload;
  const auto status = read_frame(state_->from_worker.native_source(), &payload,
                                 std::chrono::steady_clock::now() + options.start_timeout, wait_hook_);
  if (status != FrameStatus::ok) {
    const char* why = status == FrameStatus::timeout ? "did not say hello in time" : "ended before saying hello";
    kill();
    return make_error(fmt::format("{} ({} worker) {}: {}; see {}", options.executable, options.role, why,
                                  exit_description(), options.log_path));
  }
  auto hello = parse_worker_message(payload);
  if (!hello) {
    kill();
    return make_error(fmt::format("{}: {}", options.executable, hello.error().message));
  }
  hello_ = std::move(*hello);
  if (hello_.value("type", "") == protocol::reply::kError) {  // it could not start: its own words
    kill();
    return make_error(fmt::format("{}: {}", options.executable, hello_.value("message", "")));
  }
  if (hello_.value("type", "") != protocol::reply::kHello || hello_.value("protocol", 0) != protocol::kVersion) {
    kill();
    return make_error(fmt::format("{} speaks worker protocol {}, this dicebench speaks {}", options.executable,
                                  hello_.value("protocol", 0), protocol::kVersion));
  }
  return {};
}

std::string WorkerProcess::exit_description() {
  if (state_->child.running()) return "is still running";
  const int status = state_->child.native_exit_code();
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return fmt::format("was killed by signal {} (SIG{})", sig, sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
  }
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  return "has ended";
}

void WorkerProcess::kill() {
  if (!state_) return;
  std::error_code ec;
  if (state_->group.valid()) state_->group.terminate(ec);
  if (state_->child.valid()) state_->child.wait(ec);
  alive_ = false;
}

WorkerEnding WorkerProcess::end(std::chrono::milliseconds grace) {
  if (!state_) return WorkerEnding::killed;
  WorkerEnding ending = WorkerEnding::killed;
  if (alive_ && !hello_.is_null() && send(protocol::Shutdown{}.to_json())) {
    const auto deadline = std::chrono::steady_clock::now() + grace;
    while (true) {
      std::string payload;
      const FrameStatus status = read_frame(state_->from_worker.native_source(), &payload, deadline);
      if (status == FrameStatus::timeout) break;
      if (status != FrameStatus::ok) {
        ending = WorkerEnding::exited;
        break;
      }
      // Frames of a request the host gave up on may come first.
      auto message = parse_worker_message(payload);
      if (message && message->value("type", "") == protocol::reply::kShutdownDone) {
        shutdown_reply_ = std::move(*message);
        ending = WorkerEnding::answered;
        break;
      }
    }
  }
  kill();
  return ending;
}

void WorkerProcess::signal_kill() const {
  if (state_ && state_->group.valid()) ::kill(-state_->group.native_handle(), SIGKILL);
}

CallResult WorkerProcess::fail(CallFailure failure, std::string message) {
  kill();
  CallResult result;
  result.failure = failure;
  result.message = std::move(message);
  return result;
}

CallResult WorkerProcess::call(const nlohmann::json& request, std::chrono::milliseconds timeout) {
  if (!send(request)) return fail(CallFailure::crashed, "the worker " + exit_description());
  return receive(timeout);
}

bool WorkerProcess::send(const nlohmann::json& request) {
  if (!alive_) return false;
  if (!write_frame(state_->to_worker.native_sink(),
                   request.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))) {
    kill();
    return false;
  }
  return true;
}

bool WorkerProcess::readable(std::chrono::milliseconds timeout) const {
  pollfd fd{state_->from_worker.native_source(), POLLIN, 0};
  return ::poll(&fd, 1, static_cast<int>(timeout.count())) > 0;
}

CallResult WorkerProcess::receive(std::chrono::milliseconds timeout, const WorkerRequestHandler& handler,
                                  bool handler_time_counts) {
  if (!alive_) return fail(CallFailure::crashed, "the worker " + exit_description());
  if (auto hello = await_hello(); !hello) return fail(CallFailure::crashed, hello.error().message);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string last_stage;
  while (true) {
    std::string payload;
    const FrameStatus status = read_frame(state_->from_worker.native_source(), &payload, deadline, wait_hook_);
    if (status == FrameStatus::timeout) {
      auto failed =
          fail(CallFailure::timeout, fmt::format("no reply within {:.1f} s; the worker's process group was killed",
                                                 static_cast<double>(timeout.count()) / 1000.0));
      failed.last_stage = last_stage;
      return failed;
    }
    if (status != FrameStatus::ok) {
      kill();  // reaps a dead worker (keeping its exit status) and ends one that only closed its output
      auto failed = fail(CallFailure::crashed, "the worker " + exit_description());
      failed.last_stage = last_stage;
      return failed;
    }
    auto parsed = parse_worker_message(payload);
    if (!parsed) return fail(CallFailure::protocol, parsed.error().message);
    nlohmann::json message = std::move(*parsed);
    const std::string type = message.value("type", "");
    if (type.size() > 9 && type.ends_with(".progress")) {
      last_stage = message.value("stage", "");
      continue;
    }
    if (std::find(std::begin(protocol::kWorkerRequests), std::end(protocol::kWorkerRequests), type) !=
        std::end(protocol::kWorkerRequests)) {
      const auto asked = std::chrono::steady_clock::now();
      auto answer = handler ? handler(message) : std::nullopt;
      if (!answer) return fail(CallFailure::protocol, fmt::format("the worker sent {} where it has no place", type));
      if (!send(answer->frame)) return fail(CallFailure::crashed, "the worker " + exit_description());
      if (!handler_time_counts || !answer->time_counts) deadline += std::chrono::steady_clock::now() - asked;
      continue;
    }
    CallResult result;
    result.reply = std::move(message);
    result.last_stage = last_stage;
    if (type == protocol::reply::kError)
      return fail(CallFailure::protocol, "the worker refused the request: " + result.reply->value("message", ""));
    return result;
  }
}

}  // namespace dicebench::harness
