// Builds of candidates' load_inline calls with torch's own toolchain, outside the candidates'
// processes: a bounded pool (its own concurrency and time limit, apart from the fast path's
// compiles and the GPU's work) of fresh sandboxed toolchain workers (dicebench-worker --role
// toolchain, one a build, whose only writable folder is its build folder), and a cache of their
// outcomes keyed by content: the call (sources, functions, flags, the environment torch's build
// reads) and the toolchain (torch, Python, nvcc, the C++ compiler). Failures are cached like
// successes, so a re-run, a resume or the same text in another sample never builds twice; a build
// killed for its time limit, or a worker that broke, is not cached. Only the host writes the
// cache: it copies the built module out of the build folder into a new entry, with its SHA-256,
// which every read checks (a changed entry is set aside and built again). Candidates import the
// module from the entry, read-only (their sandbox shows the cache so).
//
// Precompiled headers: once a second build with the same plain flags is asked for, a worker of its
// own makes the precompiled torch/extension.h those flags give main.cpp's compile
// (precompiled_header_calls.hpp says which calls may), and the host publishes it under
// pch/<toolchain>/<flags key>/, read-only to the builds, which offer it to main.cpp's compile. At
// most four headers a toolchain, published or being made (each is about 760 MB).
#pragma once

#include "core/base/result.hpp"
#include "harness/client/sandbox_launch.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <future>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace dicebench::harness {

class WorkerProcess;

struct ToolchainBuildSettings {
  std::string worker_executable;  // dicebench-worker (role toolchain)
  std::string cache_dir;          // entries/<key>/ hold the outcomes; tmp/ the entries being written
  std::string work_root;          // build folders go here (default: $TMPDIR)
  SandboxSettings sandbox;        // around every build (the candidates' limits)
  int jobs = 1;                   // builds at once
  int niceness = 0;               // the builds' nice(2) increment (kTimedBuildNiceness while timing)
  std::chrono::milliseconds timeout{std::chrono::minutes(10)};  // one build, its worker's start included
  bool precompiled_headers = true;  // make and offer precompiled torch/extension.h headers (pch/)
};

struct ToolchainOutcome {
  enum class Kind {
    built,      // entry_dir holds module_name's module
    failed,     // torch's toolchain failed: message is its error (a compile_failed verdict)
    timed_out,  // the build ran past its time limit (a timeout verdict)
    declined,   // the service itself could not build (a worker that broke): the candidate builds
  };
  Kind kind = Kind::declined;
  std::string entry_dir, module_name, message;
  bool cache_hit = false;
  bool with_header = false;   // main.cpp's compile was offered a precompiled torch/extension.h
  double queued_seconds = 0;  // waiting for one of the pool's builds
  double build_seconds = 0;   // the build itself (0 on a cache hit)
  // toolchain.result's outcome (PROTOCOL.md): {ok, declined, entry_dir, module_name, message,
  // cache_hit, queued_seconds, build_seconds}.
  nlohmann::json answer() const;
};

class ToolchainBuilds {
 public:
  explicit ToolchainBuilds(ToolchainBuildSettings settings);
  ~ToolchainBuilds();
  ToolchainBuilds(const ToolchainBuilds&) = delete;
  ToolchainBuilds& operator=(const ToolchainBuilds&) = delete;

  // The outcome of building `call` ({"arguments": load_inline's bound arguments, "environment",
  // "compile_first"?: sources the build compiles first, not part of the key})
  // for `owner` (a candidate's job): from the cache, from a build of the same call under way, or
  // from a build of its own once one of the pool's `jobs` is free. Blocks the calling thread (a
  // candidate's loader) until known, or until the owner is abandoned (declined then).
  ToolchainOutcome build(const nlohmann::json& call, const std::string& owner);
  // The owner no longer wants its build (its candidate is gone): its wait ends, and a build no
  // other owner waits for is killed. Safe from any thread.
  void abandon(const std::string& owner);
  // Starts asking a toolchain worker what builds depend on (a worker's start and torch's import,
  // seconds), so that the first build need not wait for it, and starts the spare workers builds
  // take (one build a worker, each in a fresh sandbox; up to two kept started). Once is enough.
  void prepare();

  struct Counts {
    int64_t builds = 0, failures = 0, cache_hits = 0, timeouts = 0;  // since this object was made
    int64_t headers_made = 0, header_failures = 0, builds_with_header = 0;
    int running = 0, waiting = 0;  // now
  };
  Counts counts() const;
  const ToolchainBuildSettings& settings() const { return settings_; }

 private:
  struct InFlight;
  struct Spare;  // a toolchain worker started ahead (torch imported), with its build folder
  std::unique_ptr<Spare> spawn_spare();
  std::unique_ptr<Spare> take_spare();  // a started one where there is one, and another started in its place
  Result<std::string> fingerprint();    // toolchain.describe, asked once
  Result<std::string> describe();       // asks a toolchain worker
  std::optional<ToolchainOutcome> cached(const std::string& key);
  ToolchainOutcome run_build(const std::string& key, const nlohmann::json& call, InFlight& flight);
  ToolchainOutcome publish(const std::string& key, const std::string& module_name, const std::string& built_file);
  void store_failure(const std::string& key, const std::string& module_name, const std::string& message);
  std::filesystem::path header_folder(const std::string& fingerprint) const;  // pch/<toolchain>
  // Starts making the header `call`'s flags would use, the second time such a build is asked for
  // (unless one is made or being made).
  void consider_header(const nlohmann::json& call, const std::string& fingerprint);
  void make_header(const nlohmann::json& header_call, const std::string& marker, const std::string& fingerprint);

  ToolchainBuildSettings settings_;
  mutable std::mutex mutex_;
  std::condition_variable slot_free_;
  int running_ = 0;
  uint64_t next_ticket_ = 0;
  std::list<uint64_t> queue_;  // tickets of the builds waiting to start, in the order asked for
  std::map<std::string, std::shared_ptr<InFlight>> in_flight_;  // by key
  std::set<std::string> abandoned_;                             // owners whose waits must end
  std::shared_future<Result<std::string>> fingerprint_;         // valid once asked for
  std::mutex spares_mutex_;
  std::vector<std::unique_ptr<Spare>> spares_;  // kept started: a build need not wait for a worker's start
  std::mutex fingerprint_mutex_;
  Counts counts_;
  std::map<std::string, int> header_asks_;      // builds asked for, by header call (under mutex_)
  std::vector<std::future<void>> header_jobs_;  // headers being made (under mutex_)
  WorkerProcess* header_worker_ = nullptr;      // the one making a header now (under mutex_)
  bool stopping_ = false;                       // no header is started from now on
};

}  // namespace dicebench::harness
