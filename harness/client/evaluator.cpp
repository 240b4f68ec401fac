// Evaluates one candidate against its problem through isolated reference and candidate workers.
#include "harness/client/evaluator.hpp"

#include "core/base/sha256.hpp"
#include "core/base/text.hpp"
#include "harness/client/compile_service.hpp"
#include "harness/sandbox/protections.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <thread>

namespace dicebench::harness {
namespace {

namespace fs = std::filesystem;
using results::Verdict;

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

// Seed indexes of the secret draws besides the correctness trials (mix() keys them apart).
constexpr uint64_t kInitSeedIndex = 1'000'003;
constexpr uint64_t kTimedCallSeeds = 2'000'000;   // + call: the inputs of timed call `call`
constexpr uint64_t kCheckDraws = 3'000'000;       // + call: whether timed call `call` is checked
constexpr uint64_t kTraitSeeds = 4'000'000;       // + draw: the inputs the traits are judged on
constexpr uint64_t kBaselineSeed = 5'000'000;     // the reference's timing loop
constexpr int kTraitDraws = 3;
// Timed calls checked against the reference: kMinChecks secret ones among the calls every timing
// loop makes, each later one with probability 1/kCheckOneIn, and at least a tenth of all, made up
// by checked calls after the loop where needed (a loop cut short by its budget).
constexpr uint64_t kCheckOneIn = 10;
constexpr int kMinChecks = 3;

// The part of a compare reply an evaluation keeps: its margin (null when infinite).
std::optional<double> margin_of(const nlohmann::json& compared) { return number(compared, "margin"); }

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

// The last `bytes` of a file the candidate could have replaced: never through a link, and only
// from a regular file (a FIFO or a device would block the host or never end).
std::string tail_of_file(const fs::path& path, size_t bytes) {
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return "";
  struct stat info {};
  std::string text;
  if (fstat(fd, &info) == 0 && S_ISREG(info.st_mode)) {
    const off_t size = info.st_size;
    const off_t start = size > static_cast<off_t>(bytes) ? size - static_cast<off_t>(bytes) : 0;
    text.resize(static_cast<size_t>(size - start));
    const ssize_t got = pread(fd, text.data(), text.size(), start);
    text.resize(got > 0 ? static_cast<size_t>(got) : 0);
    if (start > 0) text = "..." + text;
  }
  close(fd);
  return text;
}

std::string default_fastpath_cache() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/dicebench/fastpath";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/dicebench/fastpath";
  return (fs::temp_directory_path() / "dicebench-fastpath").string();
}

std::chrono::milliseconds remaining(std::chrono::steady_clock::time_point deadline) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
}

std::string work_root_of(const std::string& root) { return root.empty() ? fs::temp_directory_path().string() : root; }

// A job folder only this user can enter, removed when the evaluation ends unless kept.
struct JobFolder {
  fs::path path;
  bool keep = false;
  JobFolder(const std::string& root, bool keep_it) : keep(keep_it) {
    std::string pattern = (fs::path(work_root_of(root)) / "dicebench-job-XXXXXX").string();
    if (mkdtemp(pattern.data())) path = pattern;
  }
  ~JobFolder() {
    std::error_code ec;
    if (!path.empty() && !keep) fs::remove_all(path, ec);
  }
};

// Environment both kinds of worker get; a value the user set is kept. On the CPU: OpenMP threads
// sleep as soon as their work is done (by default they spin for milliseconds afterwards, and the
// reference's spinning, as it makes every timed call's inputs, took the cores from the candidate's
// timed calls: a 0.4 ms call timed at 22 ms on 2 cores); Triton kernels run under Triton's
// interpreter (without a GPU, a @triton.jit candidate failed with "0 active drivers").
std::vector<std::pair<std::string, std::string>> worker_environment(const std::string& device) {
  std::vector<std::pair<std::string, std::string>> environment;
  if (device != "cpu") return environment;
  for (const auto& [name, value] : {std::pair<const char*, const char*>{"OMP_WAIT_POLICY", "PASSIVE"}, {"TRITON_INTERPRET", "1"}})
    if (!std::getenv(name)) environment.emplace_back(name, value);
  return environment;
}

// What the sandbox launcher said about how the job ended (a limit it killed the job for, processes
// that outlived it), for a crash's message.
std::string sandbox_notes(const fs::path& log) {
  std::string notes;
  for (const auto& line : split(tail_of_file(log, 16384), '\n')) {
    if (line.rfind(sandbox::kLogPrefix, 0) != 0 || line.find("active: ") != std::string::npos) continue;
    notes += "; " + line.substr(sandbox::kLogPrefix.size());
  }
  return notes;
}

}  // namespace

// A candidate worker: spawned, sent its candidate.load at once; a thread of its own receives the
// load's reply, compiling what the candidate asks for on the way (compile_service.hpp), so that
// prefetched candidates compile while the host is busy with another.
struct Evaluator::Candidate {
  std::string source_hash;
  std::string job;
  std::unique_ptr<JobFolder> folder;
  std::unique_ptr<WorkerProcess> worker;
  std::string start_error;              // the worker could not be started
  std::optional<CallResult> loaded;     // candidate.load's outcome, once received
  std::thread loader;                   // receives the load's reply into `loaded`
  std::atomic<bool> load_done{false};
  std::chrono::steady_clock::time_point started;
  ~Candidate() {
    if (!loader.joinable()) return;
    if (worker) worker->signal_kill();  // ends the loader's wait at once
    loader.join();
  }
  fs::path log() const { return folder && !folder->path.empty() ? folder->path / "candidate.log" : fs::path(); }
};

// Adds the wall time since the last lap to a phase.
struct PhaseClock {
  std::map<std::string, double>* phases;
  std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();
  void lap(const char* phase) {
    const auto now = std::chrono::steady_clock::now();
    (*phases)[phase] += std::chrono::duration<double>(now - last).count();
    last = now;
  }
};

struct Evaluator::Job {
  std::string id, problem_hash, init_inputs;
  uint64_t init_seed = 0;
  Candidate* candidate = nullptr;
  WorkerProcess* reference = nullptr;
  Evaluation evaluation;
  std::chrono::steady_clock::time_point deadline;  // of the candidate's run (init, trials, timing)
  std::string note;                                // appended to a failing verdict's message
  double max_abs = 0, mean_abs_sum = 0;
  int compared_count = 0;
  std::optional<double> margin;                    // the worst margin of the passed comparisons
  std::optional<int> aliased_trial;                // a trial whose outputs shared storage with its inputs
  void note_compared(const nlohmann::json& compared);  // a passed comparison's figures
};

Evaluator::Evaluator(EvaluationSettings settings) : settings_(std::move(settings)) {
  if (settings_.fastpath_cache.empty()) settings_.fastpath_cache = default_fastpath_cache();
  std::error_code ec;
  fs::create_directories(settings_.fastpath_cache, ec);  // candidates see it read-only: it must exist first
  settings_.sandbox.read_only.push_back(fs::weakly_canonical(settings_.fastpath_cache, ec).string());
  // The worker's own files stay visible where the sandbox's private /tmp would hide them (a
  // checkout under /tmp); so do dicebench-compile's, which live beside it.
  if (settings_.sandbox.mode != "off")
    for (const auto& path : worker_runtime_paths(settings_.worker_executable)) settings_.sandbox.read_only.push_back(path);
}

Evaluator::~Evaluator() {
  if (reference_ && reference_->alive()) (void)reference_->call({{"type", "shutdown"}}, std::chrono::seconds(5));
}

Result<void> Evaluator::spawn_reference() {
  if (reference_ && reference_->alive()) return {};
  if (settings_.sandbox.mode != "off") {
    auto status = sandbox_status(settings_.sandbox);  // under require, a missing protection stops here
    if (!status) return status.error();
  }
  if (log_dir_.empty()) {
    JobFolder folder(settings_.work_root, false);
    if (folder.path.empty()) return make_error("cannot create a folder for worker logs");
    log_dir_ = folder.path.string() + "-logs";
    std::error_code ec;
    fs::create_directories(log_dir_, ec);
  }
  WorkerOptions options{settings_.worker_executable, "reference", settings_.device, log_dir_ + "/reference.log",
                        settings_.visible_devices};
  options.environment = worker_environment(settings_.device);
  auto spawned = WorkerProcess::spawn(options);
  if (!spawned) return spawned.error();
  reference_ = std::move(*spawned);
  return {};
}

void Evaluator::start_reference() { (void)spawn_reference(); }  // a failure shows again in reference()

Result<WorkerProcess*> Evaluator::reference() {
  DICEBENCH_TRY(spawn_reference());
  if (reference_->hello().is_null()) {
    if (auto hello = reference_->await_hello(); !hello) {
      reference_.reset();
      return hello.error();
    }
  }
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
                                  {"seed", mix(settings_.secret, problem_hash, kBaselineSeed)},
                                  {"warmup", settings_.warmup}, {"min_trials", settings_.min_trials},
                                  {"max_trials", settings_.max_trials}, {"budget_s", settings_.budget_seconds},
                                  {"target_rel_ci", settings_.target_rel_ci}, {"method", settings_.baseline_method}};
  auto timed = (*ref)->call(request, settings_.reference_timeout);
  if (timed.failure != CallFailure::none) return make_error("timing the reference failed: " + timed.message);
  const Timing timing = timing_from(timed.reply->at("timing"));
  baselines_[problem_hash] = timing;
  *measured = true;
  return timing;
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

namespace {

// A candidate worker's reply that names something outside the vocabulary (protocol.py), which the
// JSON library cannot see; evaluate_with charges it to the candidate as it does a mistyped reply.
struct ProtocolBreach : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The verdict a failed candidate call's error_class names (results::kCandidateFailureVerdicts); an
// empty or absent one means runtime_error.
Verdict candidate_failure_verdict(const nlohmann::json& reply) {
  const std::string name = reply.value("error_class", "");
  if (name.empty()) return Verdict::runtime_error;
  const auto verdict = results::parse_verdict(name);
  const auto& allowed = results::kCandidateFailureVerdicts;
  if (!verdict || std::find(allowed.begin(), allowed.end(), *verdict) == allowed.end())
    throw ProtocolBreach(fmt::format("error_class '{}' names no failure of a candidate", name));
  return *verdict;
}

// The verdict of a reference.compared reply (results::kComparisonVerdicts). The reference worker is
// the harness's own, so another name is the harness failing.
Result<Verdict> compared_verdict(const nlohmann::json& reply) {
  const std::string name = reply.value("verdict", "");
  const auto verdict = results::parse_verdict(name);
  const auto& allowed = results::kComparisonVerdicts;
  if (verdict && std::find(allowed.begin(), allowed.end(), *verdict) != allowed.end()) return *verdict;
  return make_error(fmt::format("the reference worker broke the protocol: '{}' is not a comparison's verdict", name));
}

// A failed candidate call as its verdict: timeout, crashed, or the reply's own error class.
void charge_failure(Evaluation& e, const CallResult& result, const std::string& stage, const std::string& note,
                    const fs::path& log = {}) {
  if (result.failure != CallFailure::none) {
    e.status = result.failure == CallFailure::timeout ? Verdict::timeout : Verdict::crashed;
    e.error_class = results::verdict_name(e.status);
    e.error_message = fmt::format("{} during {}{}{}", result.message, stage, note, log.empty() ? "" : sandbox_notes(log));
    return;
  }
  const nlohmann::json& reply = *result.reply;
  e.status = candidate_failure_verdict(reply);
  e.error_class = results::verdict_name(e.status);
  e.error_message = reply.value("message", "") + note;
  const std::string trace = reply.value("traceback_tail", "");
  if (!trace.empty()) e.error_message += "\n" + trace;
}

bool failed(const CallResult& result) { return result.failure != CallFailure::none || !result.reply->value("ok", false); }

// The JIT compiles a candidate's reply reports so far (candidate.outputs and candidate.timed carry
// them, failed or not), kept beside the load-time compile.
void note_jit(Evaluation& e, const CallResult& result) {
  if (result.failure != CallFailure::none || !result.reply) return;
  const auto jit = result.reply->find("jit");
  if (jit == result.reply->end() || !jit->is_object()) return;
  if (!e.compile) e.compile = CompileInfo{};
  e.compile->jit = *jit;
}

CompileInfo compile_info_from(const nlohmann::json& j) {
  CompileInfo c;
  c.path = j.value("path", "none");
  c.reason = j.value("reason", "");
  c.log = j.value("log", "");
  c.seconds = j.value("seconds", 0.0);
  c.records = j.value("records", nlohmann::json::array());
  return c;
}

DeviceProfile profile_from(const nlohmann::json& j) {
  DeviceProfile p;
  p.busy_ms = j.value("busy_ms", 0.0);
  p.host_ms = j.value("host_ms", 0.0);
  p.call_host_ms = j.value("call_host_ms", 0.0);
  p.launch_latency_ms = j.value("launch_latency_ms", 0.0);
  p.span_ms = j.value("span_ms", 0.0);
  p.candidate_share = j.value("candidate_share", 0.0);
  for (const auto& k : j.value("kernels", nlohmann::json::array()))
    p.kernels.push_back({k.value("name", ""), k.value("kind", "kernel"), k.value("from_candidate", false),
                         k.value("launches_per_call", 0.0), k.value("ms_per_call", 0.0), k.value("grid", ""),
                         k.value("block", "")});
  return p;
}

}  // namespace

// One trial: the reference makes inputs and keeps its outputs, the candidate runs, the reference
// compares. false once a verdict is decided (the candidate failed); errors are the harness's.
Result<bool> Evaluator::check_trial(Job& job, int trial, uint64_t seed) {
  Evaluation& e = job.evaluation;
  auto inputs = job.reference->call({{"type", "reference.trial"}, {"job", job.id}, {"trial", trial}, {"seed", seed}},
                                    settings_.reference_timeout);
  if (inputs.failure != CallFailure::none) return make_error("the reference worker failed: " + inputs.message);
  if (!inputs.reply->value("ok", false))
    return make_error(fmt::format("the reference program failed on trial {}: {}", trial, inputs.reply->value("message", "")));
  e.input_bytes = std::max(e.input_bytes, inputs.reply->value("input_bytes", int64_t{0}));
  e.output_bytes = std::max(e.output_bytes, inputs.reply->value("output_bytes", int64_t{0}));
  const auto left = remaining(job.deadline);
  if (left.count() <= 0) {
    e.status = Verdict::timeout;
    e.error_class = results::verdict_name(e.status);
    e.error_message = fmt::format("the candidate used up its {:.0f} s", settings_.candidate_timeout.count() / 1000.0);
    return false;
  }
  auto outputs = job.candidate->worker->call(
      {{"type", "candidate.forward"}, {"job", job.id}, {"trial", trial}, {"inputs", inputs.reply->at("inputs")},
       {"outputs_path", (job.candidate->folder->path / fmt::format("outputs-{}.pt", trial)).string()}},
      left);
  note_jit(e, outputs);
  if (failed(outputs)) {
    charge_failure(e, outputs, fmt::format("trial {}", trial), job.note, job.candidate->log());
    e.failed_trial = trial;
    return false;
  }
  if (outputs.reply->value("aliases_input", false)) job.aliased_trial = trial;
  auto compared = job.reference->call(
      {{"type", "reference.compare"}, {"job", job.id}, {"trial", trial}, {"outputs", outputs.reply->at("outputs")}},
      settings_.reference_timeout);
  if (compared.failure != CallFailure::none) return make_error("the reference worker failed while comparing: " + compared.message);
  const nlohmann::json& c = *compared.reply;
  const auto verdict = compared_verdict(c);
  if (!verdict) return verdict.error();
  if (*verdict != Verdict::correct) {
    e.status = *verdict;
    e.error_class = results::verdict_name(e.status);
    e.failed_trial = trial;
    e.error_message = c.value("message", "") + job.note;
    e.max_abs_diff = number(c, "max_abs_diff");
    e.mean_abs_diff = number(c, "mean_abs_diff");
    e.margin = margin_of(c);
    return false;
  }
  job.note_compared(c);
  return true;
}

void Evaluator::Job::note_compared(const nlohmann::json& compared) {
  max_abs = std::max(max_abs, number(compared, "max_abs_diff").value_or(0.0));
  mean_abs_sum += number(compared, "mean_abs_diff").value_or(0.0);
  const auto m = margin_of(compared);
  margin = m && margin ? std::max(*m, *margin) : m ? m : margin;
  ++compared_count;
}

// Timing on fresh inputs (PROTOCOL.md): the reference makes every call's inputs from a secret seed
// and hands them over one call at a time; after each call the candidate hands its outputs back, and
// a secret subset of the calls is compared with the reference's outputs for the same inputs, so an
// answer cached on an input's pointer, identity or contents fails. true with *runtime set when the
// candidate passed; false once a verdict is decided; errors are the harness's.
Result<bool> Evaluator::time_candidate(Job& job, Timing* runtime) {
  Evaluation& e = job.evaluation;
  Candidate& c = *job.candidate;
  const int first_trial = settings_.trials + 1;  // timed call k is trial first_trial + k (trials + 0: after timing)
  // Which calls are checked is secret: kMinChecks of the calls every loop makes (its warm-up and
  // min_trials), and each later call with probability 1/kCheckOneIn.
  const int sure_calls = settings_.warmup + settings_.min_trials;
  std::set<int> sure_checks;
  for (uint64_t draw = 0; static_cast<int>(sure_checks.size()) < std::min(kMinChecks, sure_calls); ++draw)
    sure_checks.insert(static_cast<int>(mix(settings_.secret, job.problem_hash, kCheckDraws + 1'000'000 + draw) %
                                        static_cast<uint64_t>(sure_calls)));
  const auto checked_draw = [&](int call) {
    if (call < sure_calls) return sure_checks.count(call) > 0;
    return mix(settings_.secret, job.problem_hash, kCheckDraws + static_cast<uint64_t>(call)) % kCheckOneIn == 0;
  };
  std::set<int> checked;  // calls whose outputs the reference keeps and compares
  std::string harness_error;
  bool decided = false;   // a checked call failed: the verdict is set
  // Asks the reference for call `call`'s inputs (keeping its outputs when checked): the
  // descriptor, or null after a failure (harness_error is then set).
  const auto inputs_for = [&](int call, bool check) -> nlohmann::json {
    if (check) checked.insert(call);
    auto made = job.reference->call({{"type", "reference.trial"}, {"job", job.id}, {"trial", first_trial + call},
                                     {"seed", mix(settings_.secret, job.problem_hash, kTimedCallSeeds + static_cast<uint64_t>(call))},
                                     {"outputs", check}},
                                    settings_.reference_timeout);
    if (made.failure != CallFailure::none) {
      harness_error = "the reference worker failed: " + made.message;
      return nullptr;
    }
    if (!made.reply->value("ok", false)) {
      harness_error = fmt::format("the reference program failed on timed call {}: {}", call, made.reply->value("message", ""));
      return nullptr;
    }
    e.output_bytes = std::max(e.output_bytes, made.reply->value("output_bytes", int64_t{0}));
    return made.reply->at("inputs");
  };
  const auto stop = [&] { return nlohmann::json{{"type", "timing.stop"}, {"job", job.id}}; };
  int expected = 0;
  const auto on_call_done = [&](const nlohmann::json& message) -> std::optional<nlohmann::json> {
    if (message.value("type", "") != "candidate.call_done") return std::nullopt;
    const int call = message.value("call", -1);
    if (call != expected || !message.contains("outputs")) return std::nullopt;
    // A loop makes at most warmup + max_trials calls that want more: a worker that asks for more
    // (the host's time in answering does not count against its time limit) breaks the protocol.
    if (message.value("more", false) && call + 1 >= settings_.warmup + settings_.max_trials) return std::nullopt;
    ++expected;
    e.timed_calls = expected;
    if (checked.count(call)) {
      auto compared = job.reference->call({{"type", "reference.compare"}, {"job", job.id}, {"trial", first_trial + call},
                                           {"outputs", message.at("outputs")}},
                                          settings_.reference_timeout);
      if (compared.failure != CallFailure::none) {
        harness_error = "the reference worker failed while comparing: " + compared.message;
        return stop();
      }
      ++e.checked_calls;
      const nlohmann::json& r = *compared.reply;
      const auto verdict = compared_verdict(r);
      if (!verdict) {
        harness_error = verdict.error().message;
        return stop();
      }
      if (*verdict != Verdict::correct) {
        e.status = *verdict;
        e.error_class = results::verdict_name(e.status);
        e.failed_call = call;
        e.error_message = fmt::format("timed call {}: {}", call, r.value("message", ""));
        e.max_abs_diff = number(r, "max_abs_diff");
        e.mean_abs_diff = number(r, "mean_abs_diff");
        e.margin = margin_of(r);
        decided = true;
        return stop();
      }
      job.note_compared(r);
    }
    const bool more = message.value("more", false);
    const int needed = std::max(kMinChecks, (expected + 9) / 10);
    if (!more && static_cast<int>(checked.size()) >= needed) return stop();
    // The loop goes on (a secret draw decides the check), or one more checked call makes up the count.
    auto inputs = inputs_for(expected, more ? checked_draw(expected) : true);
    if (inputs.is_null()) return stop();
    return nlohmann::json{{"type", "timing.next"}, {"job", job.id}, {"call", expected}, {"inputs", std::move(inputs)}};
  };
  auto first = inputs_for(0, checked_draw(0));
  if (first.is_null()) return make_error(harness_error);
  // The loop's budget leaves half the candidate's time limit for the rest: a slow machine makes
  // timing stop early (stop_reason "budget"), never a correct candidate run out of time.
  const double left_s = std::chrono::duration<double>(remaining(job.deadline)).count();
  const double budget_s = std::max(0.05, std::min(settings_.budget_seconds, left_s / 2));
  nlohmann::json request = {{"type", "candidate.time"}, {"job", job.id}, {"inputs", std::move(first)},
                            {"outputs_path", (c.folder->path / "outputs-timed.pt").string()},
                            {"warmup", settings_.warmup}, {"min_trials", settings_.min_trials},
                            {"max_trials", settings_.max_trials}, {"budget_s", budget_s},
                            {"target_rel_ci", settings_.target_rel_ci}};
  CallResult timed;
  if (!c.worker->send(request)) {
    timed.failure = CallFailure::crashed;
    timed.message = "the candidate worker ended before it read its request";
  } else {
    timed = c.worker->receive(std::max(remaining(job.deadline), std::chrono::milliseconds(1)), on_call_done,
                              /*handler_time_counts=*/false);
  }
  if (!harness_error.empty()) return make_error(harness_error);
  if (decided) return false;
  note_jit(e, timed);
  if (failed(timed)) {
    charge_failure(e, timed, fmt::format("timing (call {})", e.timed_calls), "", c.log());
    return false;
  }
  if (timed.reply->value("stopped", false) || !timed.reply->contains("timing") || !timed.reply->at("timing").is_object())
    return make_error("the candidate ended timing without a result the host asked for");
  *runtime = timing_from(timed.reply->at("timing"));
  if (timed.reply->contains("profile") && timed.reply->at("profile").is_object())
    e.profile = profile_from(timed.reply->at("profile"));
  return true;
}

// The candidate's side of an evaluation once the reference is prepared: load (compile), init,
// correctness trials, timing, a check after timing. Leaves the verdict in job.evaluation.
Result<void> Evaluator::run_candidate(Job& job) {
  Evaluation& e = job.evaluation;
  Candidate& c = *job.candidate;
  PhaseClock clock{&e.phases};
  await_load(c);
  clock.lap("compile_wait");
  launch_ahead();  // once this candidate has compiled, so it never waits on the ones behind it
  top_up_spares();
  e.failed_stage = "load";
  if (!c.loaded->reply || c.loaded->failure != CallFailure::none) {
    charge_failure(e, *c.loaded, "start-up and compile", "", c.log());
    return {};
  }
  if (c.loaded->reply->contains("compile")) e.compile = compile_info_from(c.loaded->reply->at("compile"));
  if (failed(*c.loaded)) {
    charge_failure(e, *c.loaded, "load", "", c.log());
    return {};  // not compiled, as KernelBench counts it: the candidate's module did not load
  }
  e.compiled = true;

  e.failed_stage = "init";
  job.deadline = std::chrono::steady_clock::now() + settings_.candidate_timeout;
  auto init = c.worker->call({{"type", "candidate.init"}, {"job", job.id}, {"init_seed", job.init_seed},
                              {"init_inputs", job.init_inputs}, {"model_mode", settings_.model_mode}},
                             remaining(job.deadline));
  clock.lap("init");
  if (failed(init)) {
    charge_failure(e, init, "init", "", c.log());
    return {};
  }
  e.failed_stage = "trials";
  for (int t = 0; t < settings_.trials; ++t) {
    auto ok = check_trial(job, t, mix(settings_.secret, job.problem_hash, static_cast<uint64_t>(t)));
    if (!ok) return ok.error();
    if (!*ok) return {};
  }
  clock.lap("trials");

  e.failed_stage = "timing";
  Timing runtime;
  auto timed = time_candidate(job, &runtime);
  if (!timed) return timed.error();
  if (!*timed) return {};
  clock.lap("timing");

  // A candidate that behaves differently once timing has started is caught here.
  e.failed_stage = "after_timing";
  job.note = " (in a call made after timing started)";
  const int after_trial = settings_.trials;
  auto ok = check_trial(job, after_trial, mix(settings_.secret, job.problem_hash, static_cast<uint64_t>(after_trial)));
  if (!ok) return ok.error();
  if (!*ok) return {};
  clock.lap("after_timing");

  e.failed_stage.clear();
  e.status = Verdict::correct;
  e.correct = true;
  e.max_abs_diff = job.max_abs;
  e.mean_abs_diff = job.compared_count ? job.mean_abs_sum / job.compared_count : 0.0;
  e.margin = job.margin;
  e.runtime = runtime;
  return {};
}

std::optional<ProblemTraits> Evaluator::traits(const std::string& problem_hash) const {
  const auto it = traits_.find(problem_hash);
  return it == traits_.end() ? std::nullopt : std::optional<ProblemTraits>(it->second);
}

// The problem's degenerate traits, judged once per problem from the reference alone.
Result<void> Evaluator::judge_traits(Job& job) {
  if (traits_.count(job.problem_hash)) return {};
  nlohmann::json seeds = nlohmann::json::array();
  for (int draw = 0; draw < kTraitDraws; ++draw)
    seeds.push_back(mix(settings_.secret, job.problem_hash, kTraitSeeds + static_cast<uint64_t>(draw)));
  auto judged = job.reference->call({{"type", "reference.traits"}, {"job", job.id}, {"seeds", seeds}},
                                    settings_.reference_timeout);
  if (judged.failure != CallFailure::none) return make_error("the reference worker failed: " + judged.message);
  if (!judged.reply->value("ok", false))
    return make_error("the reference program failed while its traits were judged: " + judged.reply->value("message", ""));
  ProblemTraits traits{judged.reply->value("traits", nlohmann::json::array()),
                       judged.reply->value("details", nlohmann::json::object())};
  traits_[job.problem_hash] = traits;
  job.evaluation.traits_measured = std::move(traits);
  return {};
}

// The device's memory bandwidth, measured once by the reference worker on CUDA (or set).
Result<void> Evaluator::measure_bandwidth(Job& job) {
  if (bandwidth_) return {};
  if (settings_.bandwidth > 0) {
    bandwidth_ = Bandwidth{settings_.bandwidth, "setting"};
    return {};
  }
  if (settings_.device != "cuda") return {};
  auto measured = job.reference->call({{"type", "reference.bandwidth"}, {"job", job.id}}, settings_.reference_timeout);
  if (measured.failure != CallFailure::none) return make_error("the reference worker failed: " + measured.message);
  bandwidth_ = Bandwidth{measured.reply->value("bytes_per_second", 0.0), measured.reply->value("method", "")};
  if (bandwidth_->bytes_per_second <= 0) return make_error("the reference worker measured no memory bandwidth");
  job.evaluation.bandwidth_measured = bandwidth_;
  return {};
}

// run_candidate, then what qualifies a verdict: the baseline and speedup of a correct candidate,
// and the flags (results/flags.hpp).
Result<void> Evaluator::judge(Job& job, Candidate& candidate) {
  auto ran = run_candidate(job);
  candidate.worker->kill();  // one candidate per process, always
  if (!ran) return ran.error();
  Evaluation& e = job.evaluation;
  if (job.aliased_trial)
    e.flags.emplace_back(results::EvaluationFlag::output_aliases_input, fmt::format("an output shares storage with an input (trial {})", *job.aliased_trial));
  if (e.margin && (e.correct || e.status == Verdict::output_mismatch) && results::is_borderline_margin(*e.margin))
    e.flags.emplace_back(results::EvaluationFlag::borderline, fmt::format("margin {:.3g}", *e.margin));
  if (!e.correct) return {};
  PhaseClock clock{&e.phases};
  auto base = baseline(job.id, job.problem_hash, &e.baseline_measured);
  clock.lap("baseline");
  if (!base) return base.error();
  e.baseline = *base;
  if (e.runtime->median_ms > 0) e.speedup = base->median_ms / e.runtime->median_ms;
  if (e.runtime->mean_ms > 0) e.speedup_mean = base->mean_ms / e.runtime->mean_ms;
  if (e.speedup && *e.speedup > settings_.speedup_bound)
    e.flags.emplace_back(results::EvaluationFlag::excessive_speedup, fmt::format("{:.2f}x, above {:g}x", *e.speedup, settings_.speedup_bound));
  if (bandwidth_) {
    e.memory_floor_ms = static_cast<double>(e.input_bytes + e.output_bytes) / bandwidth_->bytes_per_second * 1e3;
    if (e.runtime->median_ms < *e.memory_floor_ms)
      e.flags.emplace_back(results::EvaluationFlag::below_memory_floor,
                           fmt::format("{:.4g} ms for {} bytes in and {} out; {:.4g} ms at {:.0f} GB/s", e.runtime->median_ms,
                                       e.input_bytes, e.output_bytes, *e.memory_floor_ms, bandwidth_->bytes_per_second / 1e9));
  }
  return {};
}

namespace {

// Verdicts of a candidate built on the fast path that torch's toolchain re-judges: failures where
// the fast path's own glue (argument conversion, the ATen shim) could be the cause.
bool fastpath_could_cause(const Evaluation& e) {
  if (!e.compile || (e.compile->path != "nvrtc" && e.compile->path != "mixed")) return false;
  return e.status == Verdict::crashed || e.status == Verdict::runtime_error || e.status == Verdict::shape_mismatch ||
         e.status == Verdict::dtype_mismatch;
}

}  // namespace

Result<Evaluation> Evaluator::evaluate(const std::string& problem_source, const std::string& problem_hash,
                                       const std::string& candidate_source) {
  const auto started = std::chrono::steady_clock::now();
  start_reference();  // starting while the candidate's worker starts, not before it

  // The candidate's worker may have been launched ahead (the caller may take prefetched
  // candidates in any order, e.g. whichever compiled first).
  std::unique_ptr<Candidate> candidate;
  const std::string hash = sha256_hex(candidate_source);
  if (const auto found = std::find_if(ahead_.begin(), ahead_.end(), [&](const auto& c) { return c->source_hash == hash; });
      found != ahead_.end()) {
    candidate = std::move(*found);
    ahead_.erase(found);
  } else if (const auto queued = std::find(queued_.begin(), queued_.end(), candidate_source); queued != queued_.end()) {
    queued_.erase(queued);
  }
  if (!candidate) candidate = launch(candidate_source, settings_.fastpath);
  auto evaluated = evaluate_with(problem_source, problem_hash, *candidate);
  if (!evaluated) return evaluated.error();
  Evaluation e = std::move(*evaluated);

  // The compile path never decides a verdict: a failure the fast path's glue could have caused is
  // judged again with torch's toolchain, whose verdict is kept; a disagreement is flagged.
  if (settings_.confirm_fastpath_failures && fastpath_could_cause(e)) {
    std::unique_ptr<Candidate> again = launch(candidate_source, /*fastpath=*/false);
    auto rejudged = evaluate_with(problem_source, problem_hash, *again);
    if (!rejudged) return rejudged.error();
    Evaluation toolchain = std::move(*rejudged);
    toolchain.fastpath_outcome = nlohmann::json{{"verdict", results::verdict_name(e.status)}, {"error_message", e.error_message.substr(0, 2000)},
                                                {"compile_path", e.compile ? e.compile->path : "none"}};
    if (toolchain.status != e.status)
      toolchain.flags.emplace_back(results::EvaluationFlag::fastpath_disagreement,
                                   fmt::format("fast path: {}; torch's toolchain: {}", results::verdict_name(e.status),
                                               results::verdict_name(toolchain.status)));
    for (const auto& [phase, seconds] : e.phases) toolchain.phases["fastpath_" + phase] = seconds;
    if (!toolchain.traits_measured) toolchain.traits_measured = std::move(e.traits_measured);
    if (!toolchain.bandwidth_measured) toolchain.bandwidth_measured = std::move(e.bandwidth_measured);
    e = std::move(toolchain);
  }
  e.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return e;
}

// One candidate worker's whole evaluation: the reference prepared for its job folder, the problem's
// checks (traits, bandwidth) where not known yet, the candidate judged, the reference released.
Result<Evaluation> Evaluator::evaluate_with(const std::string& problem_source, const std::string& problem_hash,
                                            Candidate& candidate) {
  if (!candidate.start_error.empty()) return make_error(candidate.start_error);
  auto ref = reference();
  if (!ref) return ref.error();

  Job job;
  job.id = candidate.job;
  job.problem_hash = problem_hash;
  job.candidate = &candidate;
  job.reference = *ref;
  job.init_seed = mix(settings_.secret, problem_hash, kInitSeedIndex);
  const nlohmann::json prepare = {{"type", "reference.prepare"}, {"job", job.id}, {"problem_source", problem_source},
                                  {"problem_name", problem_hash}, {"device", settings_.device}, {"init_seed", job.init_seed},
                                  {"work_dir", candidate.folder->path.string()}, {"tolerance", settings_.tolerance},
                                  {"model_mode", settings_.model_mode}};
  PhaseClock clock{&job.evaluation.phases};
  auto prepared = (*ref)->call(prepare, settings_.reference_timeout);
  clock.lap("prepare");
  if (prepared.failure != CallFailure::none) return make_error("the reference worker failed: " + prepared.message);
  if (!prepared.reply->value("ok", false))
    return make_error("the reference program failed: " + prepared.reply->value("message", std::string("no reason given")));
  job.init_inputs = prepared.reply->value("init_inputs", "");
  struct Release {
    WorkerProcess* worker;
    std::string job;
    ~Release() {
      if (worker->alive()) (void)worker->call({{"type", "reference.release"}, {"job", job}}, std::chrono::seconds(60));
    }
  } release{*ref, job.id};
  DICEBENCH_TRY(judge_traits(job));
  DICEBENCH_TRY(measure_bandwidth(job));
  clock.lap("problem_checks");
  // A reply whose fields are missing, of the wrong types or outside the vocabulary. The candidate's
  // code runs in its worker and can rewrite what that worker sends: the breach is charged to the
  // candidate, and never ends the run (nor a resumed one, which would meet the same candidate first).
  const auto breach = [&](const char* what) {
    if (candidate.worker) candidate.worker->kill();
    job.evaluation.status = Verdict::crashed;
    job.evaluation.error_class = results::verdict_name(Verdict::crashed);
    job.evaluation.correct = false;
    job.evaluation.error_message = fmt::format("the candidate's worker broke the protocol (a malformed reply: {})", what);
  };
  try {
    DICEBENCH_TRY(judge(job, candidate));
  } catch (const nlohmann::json::exception& error) {
    breach(error.what());
  } catch (const ProtocolBreach& error) {
    breach(error.what());
  }
  job.evaluation.problem_traits = traits(problem_hash);
  job.evaluation.log_tail = tail_of_file(candidate.folder->path / "candidate.log", 2000);
  return std::move(job.evaluation);
}

}  // namespace dicebench::harness
