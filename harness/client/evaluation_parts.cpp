// Helpers the evaluator's files share: seeds, job folders, worker environments, and reading
// workers' replies into an Evaluation (evaluation_parts.hpp; the record's own parts are read by
// core/spec's generated *_from_worker).
#include "harness/client/evaluation_parts.hpp"

#include "core/base/sha256.hpp"
#include "core/base/text.hpp"
#include "harness/sandbox/protections.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

namespace dicebench::harness::parts {

uint64_t mix(uint64_t secret, const std::string& problem_hash, uint64_t index) {
  const std::string digest = sha256_hex(fmt::format("{}:{}:{}", secret, problem_hash, index));
  return std::strtoull(digest.substr(0, 15).c_str(), nullptr, 16);
}

// A number field that may be absent or null (a shape mismatch has no difference to report).
std::optional<double> number(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? std::optional<double>(it->get<double>()) : std::nullopt;
}

// The part of a compare reply an evaluation keeps: its margin (null when infinite).
std::optional<double> margin_of(const nlohmann::json& compared) { return number(compared, "margin"); }

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

std::string default_toolchain_cache() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/dicebench/toolchain";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/dicebench/toolchain";
  return (fs::temp_directory_path() / "dicebench-toolchain").string();
}

std::chrono::milliseconds remaining(std::chrono::steady_clock::time_point deadline) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
}

std::string work_root_of(const std::string& root) { return root.empty() ? fs::temp_directory_path().string() : root; }

// Environment both kinds of worker get; a value the user set is kept. On every device: numpy's
// OpenBLAS threads sleep as soon as their work is done (OPENBLAS_THREAD_TIMEOUT=4, 2^4 cycles,
// OpenBLAS's least; by default they spin for 2^28). Every worker imports torch, which imports numpy,
// which starts one such thread per core: on the 16-core H100 host `import numpy` took 2.26 s of CPU
// for 0.38 s of wall time, and `import torch` 5.5-5.6 s of CPU for 3.8-3.95 s (2.9-3.1 s of CPU with
// the timeout), in every candidate's worker. On the CPU also: OpenMP threads sleep as soon as
// their work is done (by default they spin for milliseconds afterwards, and the reference's
// spinning, as it makes every timed call's inputs, took the cores from the candidate's timed
// calls: a 0.4 ms call timed at 22 ms on 2 cores); Triton kernels run under Triton's interpreter
// (without a GPU, a @triton.jit candidate failed with "0 active drivers").
std::vector<std::pair<std::string, std::string>> worker_environment(const std::string& device) {
  std::vector<std::pair<const char*, const char*>> wanted{{"OPENBLAS_THREAD_TIMEOUT", kOpenBlasThreadTimeout}};
  if (device == "cpu") wanted.insert(wanted.end(), {{"OMP_WAIT_POLICY", "PASSIVE"}, {"TRITON_INTERPRET", "1"}});
  std::vector<std::pair<std::string, std::string>> environment;
  for (const auto& [name, value] : wanted)
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

// The verdict a failed candidate call's error_class names (kCandidateFailureVerdicts); an
// empty or absent one means runtime_error.
Result<Verdict> candidate_failure_verdict(const nlohmann::json& reply) {
  const std::string name = reply.value("error_class", "");
  if (name.empty()) return Verdict::runtime_error;
  const auto verdict = parse_verdict(name);
  if (!verdict || !in_group(*verdict, kCandidateFailureVerdicts))
    return make_error(ErrorKind::protocol_breach,
                      fmt::format("error_class '{}' names no failure of a candidate", name));
  return *verdict;
}

// The verdict of a reference.compared reply (kComparisonVerdicts). The reference worker is
// the harness's own, so another name is the harness failing.
Result<Verdict> compared_verdict(const nlohmann::json& reply) {
  const std::string name = reply.value("verdict", "");
  const auto verdict = parse_verdict(name);
  if (verdict && in_group(*verdict, kComparisonVerdicts)) return *verdict;
  return make_error(ErrorKind::harness_failure,
                    fmt::format("the reference worker broke the protocol: '{}' is not a comparison's verdict", name));
}

// A failed candidate call as its verdict: timeout, crashed, or the reply's own error class.
Result<void> charge_failure(Evaluation& e, const CallResult& result, const std::string& stage, const std::string& note,
                            const fs::path& log) {
  if (result.failure != CallFailure::none) {
    e.verdict = result.failure == CallFailure::timeout ? Verdict::timeout : Verdict::crashed;
    e.error_class = verdict_name(e.verdict);
    e.error_message =
        fmt::format("{} during {}{}{}", result.message, stage, note, log.empty() ? "" : sandbox_notes(log));
    return {};
  }
  const nlohmann::json& reply = *result.reply;
  const auto verdict = candidate_failure_verdict(reply);
  if (!verdict) return verdict.error();
  e.verdict = *verdict;
  e.error_class = verdict_name(e.verdict);
  e.error_message = reply.value("message", "") + note;
  const std::string trace = reply.value("traceback_tail", "");
  if (!trace.empty()) e.error_message += "\n" + trace;
  return {};
}

bool failed(const CallResult& result) {
  return result.failure != CallFailure::none || !result.reply->value("ok", false);
}

// The JIT compiles a candidate's reply reports so far (candidate.outputs and candidate.timed carry
// them, failed or not), kept beside the load-time compile.
void note_jit(Evaluation& e, const CallResult& result) {
  if (result.failure != CallFailure::none || !result.reply) return;
  const auto jit = result.reply->find("jit");
  if (jit == result.reply->end() || !jit->is_object()) return;
  if (!e.compile) e.compile = CompileInfo{};
  e.compile->jit = *jit;
}

void note_fastpath_calls(Evaluation& e, const CallResult& result) {
  if (result.failure != CallFailure::none || !result.reply) return;
  const auto calls = result.reply->find("fastpath_calls");
  if (calls != result.reply->end() && calls->is_number_integer()) e.fastpath_calls = calls->get<int64_t>();
}

// Whether a load's reply says the candidate loaded (a malformed one does not).
bool load_succeeded(const CallResult& loaded) {
  if (loaded.failure != CallFailure::none || !loaded.reply) return false;
  const auto ok = loaded.reply->find("ok");
  return ok != loaded.reply->end() && *ok == true;
}

}  // namespace dicebench::harness::parts
