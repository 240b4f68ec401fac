// The toolchain build pool and its content-addressed cache (toolchain_builds.hpp).
#include "harness/client/toolchain_builds.hpp"

#include "core/base/sha256.hpp"
#include "core/base/whole_file.hpp"
#include "core/spec/protocol.hpp"
#include "harness/client/precompiled_header_calls.hpp"
#include "harness/client/worker_process.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

namespace dicebench::harness {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

std::string random_suffix() {
  std::random_device random;
  return fmt::format("{}-{:08x}{:08x}", getpid(), random(), random());
}

// A folder of its own under `root`, removed with this object.
struct BuildFolder {
  fs::path path;
  explicit BuildFolder(const std::string& root) {
    std::string pattern =
        (fs::path(root.empty() ? fs::temp_directory_path().string() : root) / "dicebench-build-XXXXXX").string();
    if (mkdtemp(pattern.data())) path = pattern;
  }
  ~BuildFolder() {
    std::error_code ec;
    if (!path.empty()) fs::remove_all(path, ec);
  }
};

// The largest module the host copies into the cache (a torch extension is a few MiB; the build runs
// the candidate's sources and flags, and may write a file as large as its sandbox allows).
constexpr off_t kMaxModuleBytes = off_t{512} << 20;
// The longest build error kept (the compilers' output; the candidate sees it as its error message).
constexpr size_t kMaxMessageBytes = 64 << 10;

// The bytes of a regular file the build wrote, never through a link (the build is the candidate's
// code's compiler, with the candidate's flags: it may have planted anything there).
Result<std::string> read_built_file(const fs::path& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return make_error(fmt::format("cannot open the built module {}", path.string()));
  struct stat info {};
  std::string bytes;
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    close(fd);
    return make_error(fmt::format("the built module {} is not a regular file", path.string()));
  }
  if (info.st_size > kMaxModuleBytes) {
    close(fd);
    return make_error(fmt::format("the built module {} is {} bytes, over the {} the cache takes", path.string(),
                                  info.st_size, kMaxModuleBytes));
  }
  bytes.resize(static_cast<size_t>(info.st_size));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t got = pread(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (got <= 0) break;
    done += static_cast<size_t>(got);
  }
  close(fd);
  if (done != bytes.size()) return make_error(fmt::format("cannot read the built module {}", path.string()));
  return bytes;
}

bool write_file(const fs::path& path, const std::string& bytes, mode_t mode) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) return false;
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t put = write(fd, bytes.data() + done, bytes.size() - done);
    if (put <= 0) break;
    done += static_cast<size_t>(put);
  }
  const bool ok = done == bytes.size() && fsync(fd) == 0;
  close(fd);
  return ok;
}

// Errors that say the machine, not the sources, failed the build: such an outcome is not cached.
bool transient_failure(const std::string& message) {
  static constexpr std::array<std::string_view, 7> kSigns = {
      "Killed signal terminated program", "internal compiler error", "out of memory",      "No space left on device",
      "Resource temporarily unavailable", "Cannot allocate memory",  "fatal error: Killed"};
  for (const auto sign : kSigns)
    if (message.find(sign) != std::string::npos) return true;
  return false;
}

// The module's file name torch's build gives a call named `name` (the name must be a plain one).
std::optional<std::string> module_file_of(const nlohmann::json& call) {
  const auto arguments = call.find("arguments");
  if (arguments == call.end() || !arguments->is_object()) return std::nullopt;
  const auto name = arguments->find("name");
  if (name == arguments->end() || !name->is_string()) return std::nullopt;
  const std::string text = name->get<std::string>();
  if (text.empty() || text.size() > 200 || text.find_first_of("/\\") != std::string::npos || text[0] == '.')
    return std::nullopt;
  return text;
}

}  // namespace

nlohmann::json ToolchainOutcome::answer() const {
  return {{"ok", kind == Kind::built},
          {"declined", kind == Kind::declined},
          {"entry_dir", entry_dir},
          {"module_name", module_name},
          {"message", message},
          {"cache_hit", cache_hit},
          {"queued_seconds", queued_seconds},
          {"build_seconds", build_seconds}};
}

// One build under way: whoever asks for the same key meanwhile waits for its outcome.
struct ToolchainBuilds::InFlight {
  std::condition_variable done_signal;
  bool done = false;
  ToolchainOutcome outcome;
  std::set<std::string> owners;     // who waits for it
  WorkerProcess* worker = nullptr;  // while it builds (under the pool's mutex)
};

// A toolchain worker started before its build: spawned in its sandbox, its build folder the one
// it may write, torch imported while it waits. It serves one build only.
struct ToolchainBuilds::Spare {
  std::unique_ptr<BuildFolder> folder;
  std::unique_ptr<WorkerProcess> worker;
  std::string error;  // why it could not be started
};

// Spare toolchain workers kept started (no more than the pool's builds at once).
constexpr size_t kSpareWorkers = 2;

std::unique_ptr<ToolchainBuilds::Spare> ToolchainBuilds::spawn_spare() {
  auto spare = std::make_unique<Spare>();
  spare->folder = std::make_unique<BuildFolder>(settings_.work_root);
  if (spare->folder->path.empty()) {
    spare->error = "cannot create a build folder";
    return spare;
  }
  const std::string dir = spare->folder->path.string();
  WorkerOptions options{settings_.worker_executable, "toolchain", "cpu", dir + "/build.log", std::string()};
  options.start_timeout = settings_.timeout;
  // The build's own caches stay in its folder; it sees no GPU (the architectures come with the call).
  options.environment = {{"TORCH_EXTENSIONS_DIR", dir + "/torch_extensions"},
                         {"XDG_CACHE_HOME", dir + "/cache"},
                         {"OMP_WAIT_POLICY", "PASSIVE"},
                         {"OPENBLAS_THREAD_TIMEOUT", kOpenBlasThreadTimeout}};
  if (settings_.sandbox.mode != "off")
    options.launcher = sandbox_command(settings_.sandbox, dir, {settings_.work_root});
  std::error_code ec;
  fs::create_directories(spare->folder->path / "module", ec);
  auto worker = WorkerProcess::spawn(options);
  if (!worker)
    spare->error = "the toolchain worker did not start: " + worker.error().message;
  else
    spare->worker = std::move(*worker);
  return spare;
}

std::unique_ptr<ToolchainBuilds::Spare> ToolchainBuilds::take_spare() {
  std::unique_ptr<Spare> taken;
  std::lock_guard guard(spares_mutex_);
  while (!spares_.empty() && !taken) {
    if (spares_.back()->worker && spares_.back()->worker->alive()) taken = std::move(spares_.back());
    spares_.pop_back();
  }
  const size_t keep = std::min(kSpareWorkers, static_cast<size_t>(settings_.jobs));
  while (spares_.size() < keep) spares_.push_back(spawn_spare());
  return taken ? std::move(taken) : spawn_spare();
}

ToolchainBuilds::ToolchainBuilds(ToolchainBuildSettings settings) : settings_(std::move(settings)) {
  if (settings_.jobs < 1) settings_.jobs = 1;
  std::error_code ec;
  fs::create_directories(fs::path(settings_.cache_dir) / "entries", ec);
  fs::create_directories(fs::path(settings_.cache_dir) / "tmp", ec);
  if (settings_.precompiled_headers) {  // builds read the headers there, read-only
    fs::create_directories(fs::path(settings_.cache_dir) / "pch", ec);
    settings_.sandbox.read_only.push_back(fs::weakly_canonical(fs::path(settings_.cache_dir) / "pch", ec).string());
  }
}

ToolchainBuilds::~ToolchainBuilds() {
  if (fingerprint_.valid()) fingerprint_.wait();  // its thread uses this object
  std::vector<std::future<void>> jobs;
  {
    std::lock_guard guard(mutex_);
    stopping_ = true;
    if (header_worker_) header_worker_->signal_kill();
    jobs.swap(header_jobs_);
  }
  for (auto& job : jobs) job.wait();
  spares_.clear();  // their workers killed, their folders removed
}

ToolchainBuilds::Counts ToolchainBuilds::counts() const {
  std::lock_guard guard(mutex_);
  Counts now = counts_;
  now.running = running_;
  now.waiting = static_cast<int>(queue_.size());
  return now;
}

void ToolchainBuilds::prepare() {
  std::lock_guard guard(fingerprint_mutex_);
  if (fingerprint_.valid()) return;
  fingerprint_ = std::async(std::launch::async, [this] { return describe(); }).share();
  std::lock_guard spares(spares_mutex_);
  while (spares_.size() < std::min(kSpareWorkers, static_cast<size_t>(settings_.jobs)))
    spares_.push_back(spawn_spare());
}

Result<std::string> ToolchainBuilds::fingerprint() {
  prepare();
  return fingerprint_.get();
}

Result<std::string> ToolchainBuilds::describe() {
  BuildFolder folder(settings_.work_root);
  if (folder.path.empty()) return make_error("cannot create a folder for the toolchain worker");
  WorkerOptions options{settings_.worker_executable, "toolchain", "cpu", (folder.path / "describe.log").string(),
                        std::string()};
  options.start_timeout = settings_.timeout;
  if (settings_.sandbox.mode != "off")
    options.launcher = sandbox_command(settings_.sandbox, folder.path.string(), {settings_.work_root});
  auto worker = WorkerProcess::start(options);
  if (!worker) return make_error("the toolchain worker did not start: " + worker.error().message);
  auto described = (*worker)->call(protocol::ToolchainDescribe{.job = "describe"}.to_json(), settings_.timeout);
  (*worker)->kill();
  if (described.failure != CallFailure::none) return make_error("the toolchain worker failed: " + described.message);
  return described.reply->at("fingerprint").dump();
}

std::optional<ToolchainOutcome> ToolchainBuilds::cached(const std::string& key) {
  const fs::path entry = fs::path(settings_.cache_dir) / "entries" / key;
  auto text = read_whole_file(entry / "outcome.json");
  if (!text) return std::nullopt;
  ToolchainOutcome outcome;
  outcome.cache_hit = true;
  try {
    const auto stored = nlohmann::json::parse(*text);
    outcome.module_name = stored.at("module_name").get<std::string>();
    outcome.message = stored.at("message").get<std::string>();
    if (!stored.at("ok").get<bool>()) {
      outcome.kind = ToolchainOutcome::Kind::failed;
      return outcome;
    }
    auto module = read_built_file(entry / (outcome.module_name + ".so"));
    if (module && sha256_hex(*module) == stored.at("module_sha256").get<std::string>()) {
      outcome.kind = ToolchainOutcome::Kind::built;
      outcome.entry_dir = entry.string();
      return outcome;
    }
  } catch (const nlohmann::json::exception&) {}
  // Changed or broken after it was written: set aside (never loaded) and built again.
  std::error_code ec;
  fs::rename(entry, fs::path(settings_.cache_dir) / "tmp" / ("rejected-" + key.substr(0, 16) + "-" + random_suffix()),
             ec);
  return std::nullopt;
}

void ToolchainBuilds::abandon(const std::string& owner) {
  std::lock_guard guard(mutex_);
  abandoned_.insert(owner);
  for (auto& [key, flight] : in_flight_) {
    const bool wanted = std::any_of(flight->owners.begin(), flight->owners.end(),
                                    [&](const std::string& o) { return !abandoned_.count(o); });
    if (!wanted && flight->worker) flight->worker->signal_kill();
    flight->done_signal.notify_all();
  }
  slot_free_.notify_all();
}

ToolchainOutcome ToolchainBuilds::build(const nlohmann::json& call, const std::string& owner) {
  const auto asked = Clock::now();
  ToolchainOutcome declined;
  const auto module_name = module_file_of(call);
  if (!module_name) {
    declined.message = "the call has no plain module name";
    return declined;
  }
  auto print = fingerprint();
  if (!print) {
    declined.message = print.error().message;
    return declined;
  }
  nlohmann::json keyed = call;  // compile_first orders the build's work, never its outcome
  keyed.erase("compile_first");
  const std::string key = sha256_hex(*print + "\n" + keyed.dump());
  if (auto hit = cached(key)) {
    std::lock_guard guard(mutex_);
    ++counts_.cache_hits;
    return *hit;
  }
  consider_header(call, *print);
  std::unique_lock lock(mutex_);
  const auto gone = [&] { return abandoned_.count(owner) > 0; };
  const auto abandoned_outcome = [&] {
    abandoned_.erase(owner);
    ToolchainOutcome outcome;
    outcome.message = "abandoned: the candidate is gone";
    return outcome;
  };
  if (const auto found = in_flight_.find(key); found != in_flight_.end()) {  // the same call, being built
    const auto flight = found->second;
    flight->owners.insert(owner);
    flight->done_signal.wait(lock, [&] { return flight->done || gone(); });
    flight->owners.erase(owner);
    if (!flight->done) return abandoned_outcome();
    ToolchainOutcome shared = flight->outcome;
    shared.cache_hit = shared.kind == ToolchainOutcome::Kind::built || shared.kind == ToolchainOutcome::Kind::failed;
    shared.queued_seconds = seconds_since(asked);
    shared.build_seconds = 0;
    if (shared.cache_hit) ++counts_.cache_hits;
    return shared;
  }
  const auto flight = std::make_shared<InFlight>();
  flight->owners.insert(owner);
  in_flight_[key] = flight;
  const uint64_t ticket = next_ticket_++;
  queue_.push_back(ticket);
  slot_free_.wait(lock, [&] { return (queue_.front() == ticket && running_ < settings_.jobs) || gone(); });
  queue_.remove(ticket);
  const auto finish = [&](ToolchainOutcome outcome) {  // under the lock
    flight->outcome = outcome;
    flight->done = true;
    flight->worker = nullptr;
    in_flight_.erase(key);
    flight->done_signal.notify_all();
    slot_free_.notify_all();
    return outcome;
  };
  if (gone()) {
    ToolchainOutcome outcome = abandoned_outcome();
    return finish(outcome);
  }
  ++running_;
  slot_free_.notify_all();
  lock.unlock();

  const double queued = seconds_since(asked);
  ToolchainOutcome outcome;
  if (auto hit = cached(key))
    outcome = *hit;  // another process may have built it meanwhile
  else
    outcome = run_build(key, call, *flight);
  outcome.queued_seconds = queued;

  lock.lock();
  --running_;
  if (outcome.cache_hit)
    ++counts_.cache_hits;
  else if (outcome.kind != ToolchainOutcome::Kind::declined)
    ++counts_.builds;
  if (outcome.kind == ToolchainOutcome::Kind::failed && !outcome.cache_hit) ++counts_.failures;
  if (outcome.kind == ToolchainOutcome::Kind::timed_out) ++counts_.timeouts;
  if (outcome.with_header) ++counts_.builds_with_header;
  flight->owners.erase(owner);
  abandoned_.erase(owner);
  return finish(outcome);
}

ToolchainOutcome ToolchainBuilds::run_build(const std::string& key, const nlohmann::json& call, InFlight& flight) {
  const auto started = Clock::now();
  ToolchainOutcome outcome;
  const std::string module_name = *module_file_of(call);
  const std::unique_ptr<Spare> spare = take_spare();
  if (!spare->worker) {
    outcome.message = spare->error;
    return outcome;
  }
  const fs::path& folder = spare->folder->path;
  const auto deadline = started + settings_.timeout;
  auto* worker = &spare->worker;
  const nlohmann::json request =
      protocol::ToolchainBuild{
          .job = "build-" + key.substr(0, 12),
          .build_dir = (folder / "module").string(),
          .call = call,
          .pch_dir = settings_.precompiled_headers ? header_folder(*fingerprint()).string() : std::string(),
          .niceness = settings_.niceness}
          .to_json();
  {
    std::lock_guard guard(mutex_);  // abandon() may end it from here on
    flight.worker = worker->get();
    const bool wanted = std::any_of(flight.owners.begin(), flight.owners.end(),
                                    [&](const std::string& o) { return !abandoned_.count(o); });
    if (!wanted) flight.worker->signal_kill();
  }
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  auto built = (*worker)->call(request, std::max(left, std::chrono::milliseconds(1)));
  {
    std::lock_guard guard(mutex_);
    flight.worker = nullptr;
  }
  (*worker)->kill();
  outcome.build_seconds = seconds_since(started);
  if (built.failure == CallFailure::timeout) {
    outcome.kind = ToolchainOutcome::Kind::timed_out;
    outcome.message = fmt::format("torch's toolchain ran past its {:.0f} s building '{}'",
                                  static_cast<double>(settings_.timeout.count()) / 1000.0, module_name);
    return outcome;
  }
  if (built.failure != CallFailure::none) {
    outcome.message = "the toolchain worker failed: " + built.message;
    return outcome;
  }
  const nlohmann::json& reply = *built.reply;
  outcome.with_header = reply.value("pch_used", false);
  if (!reply.value("ok", false)) {
    outcome.kind = ToolchainOutcome::Kind::failed;
    outcome.module_name = module_name;
    outcome.message = reply.value("message", "");
    if (outcome.message.size() > kMaxMessageBytes)
      outcome.message = outcome.message.substr(0, kMaxMessageBytes / 2) + "\n...\n" +
                        outcome.message.substr(outcome.message.size() - kMaxMessageBytes / 2);
    if (!transient_failure(outcome.message)) store_failure(key, module_name, outcome.message);
    return outcome;
  }
  if (reply.value("module_file", "") != module_name + ".so") {
    outcome.message = "the toolchain worker named another module file: " + reply.value("module_file", "");
    return outcome;
  }
  ToolchainOutcome published = publish(key, module_name, (folder / "module" / (module_name + ".so")).string());
  published.build_seconds = outcome.build_seconds;
  published.with_header = outcome.with_header;
  return published;
}

// Writes the entry under tmp/ and renames it into entries/ (atomic; an entry another process
// published first is kept, and this one dropped).
ToolchainOutcome ToolchainBuilds::publish(const std::string& key, const std::string& module_name,
                                          const std::string& built_file) {
  ToolchainOutcome outcome;
  auto module = read_built_file(built_file);
  if (!module) {
    outcome.message = module.error().message;
    return outcome;
  }
  const fs::path entries = fs::path(settings_.cache_dir) / "entries";
  const fs::path staging = fs::path(settings_.cache_dir) / "tmp" / (key.substr(0, 16) + "-" + random_suffix());
  std::error_code ec;
  fs::create_directories(staging, ec);
  const nlohmann::json stored = {
      {"ok", true}, {"module_name", module_name}, {"message", ""}, {"module_sha256", sha256_hex(*module)}};
  if (ec || !write_file(staging / (module_name + ".so"), *module, 0555) ||
      !write_file(staging / "outcome.json", stored.dump(), 0444)) {
    fs::remove_all(staging, ec);
    outcome.message = "cannot write the toolchain cache entry under " + settings_.cache_dir;
    return outcome;
  }
  fs::rename(staging, entries / key, ec);
  if (ec) fs::remove_all(staging, ec);
  if (auto entry = cached(key)) {
    entry->cache_hit = false;
    return *entry;
  }
  outcome.message = "the toolchain cache entry could not be read back under " + settings_.cache_dir;
  return outcome;
}

void ToolchainBuilds::store_failure(const std::string& key, const std::string& module_name,
                                    const std::string& message) {
  const fs::path staging = fs::path(settings_.cache_dir) / "tmp" / (key.substr(0, 16) + "-" + random_suffix());
  std::error_code ec;
  fs::create_directories(staging, ec);
  const nlohmann::json stored = {{"ok", false}, {"module_name", module_name}, {"message", message}};
  if (ec || !write_file(staging / "outcome.json", stored.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                        0444)) {
    fs::remove_all(staging, ec);
    return;
  }
  fs::rename(staging, fs::path(settings_.cache_dir) / "entries" / key, ec);
  if (ec) fs::remove_all(staging, ec);
}

fs::path ToolchainBuilds::header_folder(const std::string& fingerprint) const {
  return fs::path(settings_.cache_dir) / "pch" / sha256_hex(fingerprint).substr(0, 16);
}

// The headers one build's flags may use, made by a worker of their own (never by a build: its
// sources and flags are the candidate's) and published as the cache's entries are.
constexpr int kBuildsBeforeHeader = 2;             // a header costs about a build: made once flags recur
constexpr off_t kMaxHeaderBytes = off_t{4} << 30;  // torch/extension.h's is about 760 MB
// Headers per toolchain, published or being made: candidates choose their flags, and each new flag
// set that recurs would otherwise cost a build's CPU and 760 MB of disk.
constexpr size_t kMaxHeaders = 4;

namespace {

// The headers published under `folder` (pch/<toolchain>/<key>/).
size_t published_headers(const fs::path& folder) {
  size_t count = 0;
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename().string().size() == 32) ++count;
  return count;
}

}  // namespace

void ToolchainBuilds::consider_header(const nlohmann::json& call, const std::string& fingerprint) {
  if (!settings_.precompiled_headers) return;
  const auto header_call = header_call_for(call);
  if (!header_call) return;
  const std::string marker = sha256_hex(header_call->dump());
  std::lock_guard guard(mutex_);
  if (stopping_ || ++header_asks_[marker] != kBuildsBeforeHeader) return;
  std::error_code ec;
  if (fs::exists(header_folder(fingerprint) / "made" / marker, ec)) return;  // made by an earlier host
  std::erase_if(header_jobs_, [](const std::future<void>& job) {
    return job.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  });
  if (published_headers(header_folder(fingerprint)) + header_jobs_.size() >= kMaxHeaders) return;
  header_jobs_.push_back(std::async(std::launch::async, [this, call = *header_call, marker, fingerprint] {
    make_header(call, marker, fingerprint);
  }));
}

void ToolchainBuilds::make_header(const nlohmann::json& header_call, const std::string& marker,
                                  const std::string& fingerprint) {
  const auto failed = [this] {
    std::lock_guard guard(mutex_);
    ++counts_.header_failures;
  };
  const std::unique_ptr<Spare> spare = spawn_spare();
  if (!spare->worker) return failed();
  {
    std::lock_guard guard(mutex_);
    if (stopping_) return;
    header_worker_ = spare->worker.get();
  }
  const fs::path built = spare->folder->path / "module";
  auto made = spare->worker->call(
      protocol::ToolchainPch{.job = "pch-" + marker.substr(0, 12), .build_dir = built.string(), .call = header_call}
          .to_json(),
      settings_.timeout);
  {
    std::lock_guard guard(mutex_);
    header_worker_ = nullptr;
  }
  spare->worker->kill();
  if (made.failure != CallFailure::none || !made.reply->value("ok", false)) return failed();
  const std::string key = made.reply->value("key", "");
  if (key.size() != 32 || key.find_first_not_of("0123456789abcdef") != std::string::npos) return failed();
  // A plain file the worker wrote (lstat: a link is refused), moved into a staging folder beside
  // the published ones, with the plain header written here, then renamed into place.
  const fs::path header = built / "pch" / "torch_extension.h.gch";
  struct stat info {};
  if (lstat(header.c_str(), &info) != 0 || !S_ISREG(info.st_mode) || info.st_size > kMaxHeaderBytes) return failed();
  const fs::path folder = header_folder(fingerprint);
  const fs::path staging = folder / ("tmp-" + random_suffix());
  std::error_code ec;
  fs::create_directories(staging, ec);
  fs::create_directories(folder / "made", ec);
  fs::rename(header, staging / "torch_extension.h.gch", ec);
  if (ec) {  // another file system: copied
    ec.clear();
    fs::copy_file(header, staging / "torch_extension.h.gch", ec);
  }
  const bool written = !ec && write_file(staging / "torch_extension.h", "#include <torch/extension.h>\n", 0444);
  fs::permissions(staging / "torch_extension.h.gch",
                  fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read, ec);
  if (written && !ec) fs::rename(staging, folder / key, ec);  // a folder published first is kept
  fs::remove_all(staging, ec);
  if (!fs::exists(folder / key / "torch_extension.h.gch", ec)) return failed();
  (void)write_file(folder / "made" / marker, key, 0444);
  std::lock_guard guard(mutex_);
  ++counts_.headers_made;
}

}  // namespace dicebench::harness
