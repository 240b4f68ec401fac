// One dicebench-worker process seen from the host: started fresh with Boost.Process in its own
// process group (pinned to a GPU with CUDA_VISIBLE_DEVICES), possibly through a launcher (the
// candidate sandbox, dicebench-sandbox), spoken to through framed JSON on its stdin/stdout
// (PROTOCOL.md), killed as a group when a call runs past its time limit, and asked to end (clearing
// its device memory) before it is killed once its job is done.
#pragma once

#include "core/base/result.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dicebench::harness {

// OPENBLAS_THREAD_TIMEOUT for every worker: numpy's idle OpenBLAS threads spin 2^4 cycles, not
// 2^28, before they sleep (evaluation_parts.cpp's worker_environment says what that saves).
inline constexpr const char* kOpenBlasThreadTimeout = "4";

struct WorkerOptions {
  std::string executable;                      // dicebench-worker
  std::string role;                            // "reference" or "candidate"
  std::string device = "cpu";                  // "cpu" or "cuda"
  std::string log_path = "/dev/null";          // where the worker's (and candidate's) output goes
  std::optional<std::string> visible_devices;  // CUDA_VISIBLE_DEVICES for the worker
  std::vector<std::string> launcher{};         // runs "launcher... worker args" (dicebench-sandbox ... --)
  std::vector<std::pair<std::string, std::string>> environment{};  // set for the worker
  std::chrono::milliseconds start_timeout{std::chrono::minutes(3)};
};

enum class CallFailure { none, timeout, crashed, protocol };

// How long a worker asked to end (WorkerProcess::end) has to answer before it is killed.
inline constexpr std::chrono::milliseconds kShutdownGrace{std::chrono::seconds(5)};

// How a worker ended (WorkerProcess::end): it answered shutdown (shutdown.done: it has zeroed the
// device memory it held), its output ended without an answer, or it was killed without either.
enum class WorkerEnding { answered, exited, killed };

// The answer to such a request: the frame to send back, and whether the host's time in making it
// counts against the call's time limit (a toolchain build has a limit of its own).
struct WorkerAnswer {
  nlohmann::json frame;
  bool time_counts = true;
  WorkerAnswer(nlohmann::json answer, bool counts = true)
      : frame(std::move(answer)), time_counts(counts) {}  // NOLINT: implicit
};

// Answers such a request, or nothing when the request has no place in the call being received (a
// protocol failure).
using WorkerRequestHandler = std::function<std::optional<WorkerAnswer>(const nlohmann::json& message)>;

struct CallResult {
  std::optional<nlohmann::json> reply;
  std::string last_stage;  // the last "<role>.progress" stage the worker reported before the reply
  CallFailure failure = CallFailure::none;
  std::string message;  // why, when failure != none ("killed by signal 11 (SIGSEGV)")
};

class WorkerProcess {
 public:
  // Starts the worker and waits for its hello; a worker speaking another protocol is refused.
  static Result<std::unique_ptr<WorkerProcess>> start(const WorkerOptions& options);
  // Starts the worker without waiting: requests may be sent at once (the worker reads them once
  // it has started); await_hello() must come before the first receive().
  static Result<std::unique_ptr<WorkerProcess>> spawn(const WorkerOptions& options);
  Result<void> await_hello();
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // Sends one request and waits up to `timeout` for its reply, noting progress messages on the
  // way. On a timeout the process group is killed; after any failure the worker is dead and must
  // be replaced.
  CallResult call(const nlohmann::json& request, std::chrono::milliseconds timeout);
  // call() in two halves, so that a worker can work on a request while the host does other things.
  bool send(const nlohmann::json& request);
  // Worker requests on the way (protocol::kWorkerRequests: a candidate.compile or candidate.toolchain
  // while it loads, a candidate.call_done during candidate.time) go to `handler`; without one, or when it answers
  // nothing, they are a protocol failure. The time the handler takes counts against `timeout`
  // unless `handler_time_counts` is false (the host's own work is then not the worker's) or the
  // answer says it does not.
  CallResult receive(std::chrono::milliseconds timeout, const WorkerRequestHandler& handler = {},
                     bool handler_time_counts = true);
  // Whether a frame (or the end of the worker's output) is there to receive, waiting up to
  // `timeout`: a caller that must look at other things while it waits (the Ray pool's slot).
  bool readable(std::chrono::milliseconds timeout) const;
  // Called by the thread waiting in receive() (or for the hello) each time kIdleInterval
  // (frame_io.hpp) passes without a frame: the evaluator launches candidates from it while its
  // device is busy. It must not use this worker.
  void set_wait_hook(std::function<void()> hook) { wait_hook_ = std::move(hook); }
  const nlohmann::json& hello() const { return hello_; }
  bool alive() const { return alive_; }
  // Kills the worker's process group and reaps the worker. Its device memory goes back to the
  // driver as it is: end() first where the worker held a job's data on a GPU.
  void kill();
  // Ends the worker: sends shutdown (it zeroes the device memory it holds, answers shutdown.done and
  // exits), waits up to `grace` for that answer or the end of its output, then kills its process
  // group as kill() does. A worker that is dead already, or never said hello, is only killed.
  // The answer, where one came, is in shutdown_reply().
  WorkerEnding end(std::chrono::milliseconds grace = kShutdownGrace);
  const nlohmann::json& shutdown_reply() const { return shutdown_reply_; }
  // Sends SIGKILL to the worker's process group and nothing else: safe from another thread while
  // one is in receive(), which then sees the worker end.
  void signal_kill() const;

 private:
  struct State;
  explicit WorkerProcess(std::unique_ptr<State> state);
  CallResult fail(CallFailure failure, std::string message);
  std::string exit_description();

  std::unique_ptr<State> state_;
  WorkerOptions options_;
  nlohmann::json hello_;
  nlohmann::json shutdown_reply_;
  std::function<void()> wait_hook_;
  bool alive_ = true;
};

}  // namespace dicebench::harness
