// The fast compile path and its cache (fastpath_compiler.hpp).
#include "harness/fastpath/src/fastpath_compiler.hpp"
#include "core/base/whole_file.hpp"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <random>
#include <sstream>

#include "core/base/sha256.hpp"
#include "harness/fastpath/shim/dbfp/abi.h"
#include "harness/fastpath/src/compile_flags.hpp"
#include "harness/fastpath/src/file_lock.hpp"
#include "harness/fastpath/src/source_splitter.hpp"

namespace dicebench::fastpath {
namespace fs = std::filesystem;
namespace {

constexpr const char* kManifestVersion = "dbfp-manifest 2";
// The files of an entry whose SHA-256 the manifest records and a read checks.
constexpr const char* kEntryFiles[] = {"glue.so", "kernels.cubin"};

// "" for a file that cannot be read (a manifest check then fails).
std::string file_digest(const std::string& path) {
  auto bytes = read_whole_file(path);
  return bytes ? sha256_hex(*bytes) : "";
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

void hash_field(Sha256& h, std::string_view field) {
  h.update(std::to_string(field.size()));
  h.update(":");
  h.update(field);
}

void hash_list(Sha256& h, const std::vector<std::string>& items) {
  hash_field(h, std::to_string(items.size()));
  for (const auto& item : items) hash_field(h, item);
}

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  return static_cast<bool>(out);
}

// Folder contents in a stable order, for the shim fingerprint.
void hash_tree(Sha256& h, const std::string& root) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->is_regular_file()) files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    hash_field(h, fs::relative(f, root).string());
    hash_field(h, read_whole_file(f).value_or(""));
  }
}

std::string escape_line(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else
      out += c;
  }
  return out;
}

std::string unescape_line(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size()) {
      char n = text[++i];
      out += n == 'n' ? '\n' : n == 't' ? '\t' : n;
    } else {
      out += text[i];
    }
  }
  return out;
}

// The manifest of an entry being published from `dir`: the outcome and each file's digest.
std::string manifest_text(const CompileOutcome& o, const std::string& dir) {
  std::string m = std::string(kManifestVersion) + "\n";
  for (const char* file : kEntryFiles)
    if (fs::exists(dir + "/" + file)) m += std::string("file\t") + file + "\t" + file_digest(dir + "/" + file) + "\n";
  m += std::string("status\t") + (o.ok ? "ok" : "fallback") + "\n";
  m += "reason\t" + escape_line(o.reason) + "\n";
  for (const auto& [expr, lowered] : o.kernels)
    m += "kernel\t" + escape_line(expr) + "\t" + escape_line(lowered) + "\n";
  for (const auto& f : o.functions) m += "function\t" + escape_line(f) + "\n";
  std::ostringstream timings;
  timings << "timings\t" << o.split_seconds << "\t" << o.nvrtc_seconds << "\t" << o.gxx_seconds << "\t"
          << o.total_seconds << "\n";
  m += timings.str();
  return m;
}

std::string random_suffix() {
  std::random_device rd;
  return std::to_string(getpid()) + "-" + std::to_string(rd()) + std::to_string(rd());
}

std::string joined(const std::vector<std::string>& parts) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out += "\n";
    out += parts[i];
  }
  return out;
}

// The compile itself, into `work_dir`. Sets *cacheable when a failure is deterministic.
CompileOutcome compile_into(const CompileRequest& request, const Toolchain& toolchain, const std::string& work_dir,
                            const std::string& pch_toolchain_key, bool* cacheable) {
  CompileOutcome out;
  *cacheable = true;
  out.functions = request.functions;
  auto fail = [&](std::string reason) {
    out.ok = false;
    out.reason = std::move(reason);
    return out;
  };
  if (request.functions.empty()) return fail("load_inline without `functions` (the candidate binds its own module)");
  auto flags = map_compile_flags(request.extra_cflags, request.extra_cuda_cflags, request.extra_ldflags, request.arch);
  if (!flags) return fail(flags.error().message);

  auto split_started = std::chrono::steady_clock::now();
  bool has_cuda = !request.cuda_sources.empty();
  std::string cuda_source = joined(request.cuda_sources);
  SplitSource split;
  if (has_cuda) {
    auto result = split_cuda_source(cuda_source);
    if (!result) return fail(result.error().message);
    split = std::move(result.value());
  }
  out.split_seconds = seconds_since(split_started);

  GlueInput glue;
  glue.cpp_source = joined(request.cpp_sources);
  glue.has_cuda = has_cuda;
  glue.cuda_host_source = split.host_source;
  glue.functions = request.functions;
  glue.name_expressions = split.name_expressions;
  glue.host_libraries = split.host_libraries;
  glue.flags = flags.value();

  // NVRTC on a thread while g++ runs in child processes.
  std::future<Result<DeviceBinary>> device;
  if (has_cuda) {
    device = std::async(std::launch::async, [&]() {
      return compile_device_part(split.device_source, split.name_expressions, flags.value(), toolchain.device);
    });
  }
  PreludeFolders preludes = ensure_precompiled_preludes(toolchain.glue, pch_toolchain_key, glue);
  bool glue_deterministic = false;
  auto gxx_started = std::chrono::steady_clock::now();
  auto glue_build = build_glue(glue, toolchain.glue, preludes, work_dir, work_dir + "/glue.so", &glue_deterministic);
  out.gxx_seconds = seconds_since(gxx_started);
  if (has_cuda) {
    auto binary = device.get();
    if (!binary) return fail(binary.error().message);  // NVRTC diagnostics are deterministic
    out.nvrtc_seconds = binary->seconds;
    out.kernels = binary->lowered_names;
    if (!write_file(work_dir + "/kernels.cubin", binary->cubin)) {
      *cacheable = false;
      return fail("cannot write the cubin to " + work_dir);
    }
  }
  if (!glue_build) {
    *cacheable = glue_deterministic;
    return fail(glue_build.error().message);
  }
  out.ok = true;
  return out;
}

}  // namespace

std::string toolchain_fingerprint(const Toolchain& toolchain) {
  static std::mutex mutex;
  static std::map<std::string, std::string> known;
  std::string id = toolchain.glue.cxx + "\n" + toolchain.glue.shim_dir + "\n" + toolchain.device.device_shim_dir +
                   "\n" + toolchain.device.cuda_include_dir;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = known.find(id);
  if (it != known.end()) return it->second;
  Sha256 h;
  hash_field(h, "dbfp-toolchain 1");
  hash_field(h, std::to_string(DBFP_ABI_VERSION));
  // This build of the fast path itself (a new splitter must not reuse the old one's entries):
  // the binary that holds this code, by size and modification time.
  Dl_info self{};
  struct stat binary {};
  if (dladdr(reinterpret_cast<void*>(&toolchain_fingerprint), &self) && self.dli_fname &&
      stat(self.dli_fname, &binary) == 0) {
    hash_field(h, std::string(self.dli_fname) + ":" + std::to_string(binary.st_size) + ":" +
                      std::to_string(binary.st_mtim.tv_sec) + "." + std::to_string(binary.st_mtim.tv_nsec));
  }
  hash_field(h, "nvrtc " + nvrtc_version());
  hash_field(h, compiler_version(toolchain.glue.cxx));
  hash_field(h, toolchain.device.cuda_include_dir);
  hash_tree(h, toolchain.glue.shim_dir);
  hash_tree(h, toolchain.device.device_shim_dir);
  std::string fingerprint = h.hex();
  known[id] = fingerprint;
  return fingerprint;
}

std::string cache_key(const CompileRequest& r, const std::string& fingerprint) {
  Sha256 h;
  hash_field(h, "dbfp-request 1");
  hash_field(h, fingerprint);
  hash_field(h, kManifestVersion);
  hash_list(h, r.cpp_sources);
  hash_list(h, r.cuda_sources);
  hash_list(h, r.functions);
  hash_list(h, r.extra_cflags);
  hash_list(h, r.extra_cuda_cflags);
  hash_list(h, r.extra_ldflags);
  hash_field(h, r.arch);
  return h.hex();
}

Toolchain default_toolchain(const std::string& cache_dir) {
  Toolchain t;
  t.device.device_shim_dir = DICEBENCH_FASTPATH_DEVICE_SHIM_DIR;
  t.device.cuda_include_dir = DICEBENCH_FASTPATH_CUDA_INCLUDE_DIR;
  t.glue.cxx = "g++";
  t.glue.shim_dir = DICEBENCH_FASTPATH_SHIM_DIR;
  t.glue.cuda_include_dir = t.device.cuda_include_dir;
  t.glue.cuda_library_dir = DICEBENCH_FASTPATH_CUDA_LIBRARY_DIR;
  t.glue.timeout_seconds = 120.0;
  t.cache_dir = cache_dir;
  t.glue.pch_root = cache_dir + "/pch";
  return t;
}

Result<CompileOutcome> read_cache_entry(const std::string& entry_dir) {
  std::ifstream in(entry_dir + "/manifest.txt");
  if (!in) return make_error("no manifest in " + entry_dir);
  std::string line;
  if (!std::getline(in, line) || line != kManifestVersion) return make_error("unknown manifest in " + entry_dir);
  CompileOutcome o;
  o.entry_dir = entry_dir;
  o.key = fs::path(entry_dir).filename().string();
  std::map<std::string, std::string> digests;
  while (std::getline(in, line)) {
    std::vector<std::string> fields;
    std::size_t start = 0;
    for (std::size_t tab; (tab = line.find('\t', start)) != std::string::npos; start = tab + 1)
      fields.push_back(line.substr(start, tab - start));
    fields.push_back(line.substr(start));
    if (fields[0] == "status" && fields.size() > 1)
      o.ok = fields[1] == "ok";
    else if (fields[0] == "reason" && fields.size() > 1)
      o.reason = unescape_line(fields[1]);
    else if (fields[0] == "kernel" && fields.size() > 2)
      o.kernels.emplace_back(unescape_line(fields[1]), unescape_line(fields[2]));
    else if (fields[0] == "function" && fields.size() > 1)
      o.functions.push_back(unescape_line(fields[1]));
    else if (fields[0] == "file" && fields.size() > 2)
      digests[fields[1]] = fields[2];
    else if (fields[0] == "timings" && fields.size() > 4) {
      o.split_seconds = std::stod(fields[1]);
      o.nvrtc_seconds = std::stod(fields[2]);
      o.gxx_seconds = std::stod(fields[3]);
    }
  }
  if (o.ok && !digests.count("glue.so")) return make_error("cache entry without its glue: " + entry_dir);
  // Every file is what the compile step wrote: an entry changed since is never loaded.
  for (const char* file : kEntryFiles) {
    const bool present = fs::exists(entry_dir + "/" + file);
    const auto recorded = digests.find(file);
    if (present != (recorded != digests.end()) || (present && file_digest(entry_dir + "/" + file) != recorded->second))
      return make_error(std::string("cache entry changed after it was written (") + file + "): " + entry_dir);
  }
  return o;
}

CompileOutcome compile_with_fast_path(const CompileRequest& request, const Toolchain& toolchain) {
  auto started = std::chrono::steady_clock::now();
  std::string fingerprint = toolchain_fingerprint(toolchain);
  std::string key = cache_key(request, fingerprint);
  std::string entries = toolchain.cache_dir + "/entries";
  std::string entry_dir = entries + "/" + key;
  auto finish = [&](CompileOutcome o, bool hit) {
    o.key = key;
    o.cache_hit = hit;
    o.total_seconds = seconds_since(started);
    if (o.ok) o.entry_dir = entry_dir;
    if (hit) o.split_seconds = o.nvrtc_seconds = o.gxx_seconds = 0;
    return o;
  };
  std::error_code ec;
  fs::create_directories(entries, ec);
  fs::create_directories(toolchain.cache_dir + "/locks", ec);
  fs::create_directories(toolchain.cache_dir + "/tmp", ec);
  if (ec) {
    CompileOutcome o;
    o.reason = "cannot create the cache folder " + toolchain.cache_dir + ": " + ec.message();
    return finish(o, false);
  }
  if (auto hit = read_cache_entry(entry_dir)) return finish(hit.value(), true);

  // One compile per key at a time across processes: the others wait, then read the entry.
  std::string lock_path = toolchain.cache_dir + "/locks/" + key + ".lock";
  const ExclusiveFileLock lock(lock_path);
  if (auto hit = read_cache_entry(entry_dir)) return finish(hit.value(), true);
  // An entry that does not check out is moved aside and built again.
  if (fs::exists(entry_dir, ec)) {
    const std::string aside = toolchain.cache_dir + "/tmp/rejected-" + key.substr(0, 16) + "-" + random_suffix();
    fs::rename(entry_dir, aside, ec);
    fs::remove_all(aside, ec);
  }

  std::string work_dir = toolchain.cache_dir + "/tmp/" + key.substr(0, 16) + "-" + random_suffix();
  fs::create_directories(work_dir, ec);
  bool cacheable = false;
  Sha256 pch_key;
  hash_field(pch_key, fingerprint);
  CompileOutcome outcome = compile_into(request, toolchain, work_dir, pch_key.hex().substr(0, 24), &cacheable);
  outcome.total_seconds = seconds_since(started);
  if (!outcome.ok && !cacheable) {
    fs::remove_all(work_dir, ec);
    return finish(outcome, false);
  }
  // Publish: the manifest last, then the folder renamed into place in one step.
  // The glue sources stay in the entry (what g++ compiled, for reading a fallback's reason).
  for (const char* scratch : {"main.o", "cuda.o"}) fs::remove(work_dir + "/" + scratch, ec);
  if (!outcome.ok) {
    fs::remove(work_dir + "/glue.so", ec);
    fs::remove(work_dir + "/kernels.cubin", ec);
  }
  write_file(work_dir + "/manifest.txt", manifest_text(outcome, work_dir));
  fs::rename(work_dir, entry_dir, ec);
  if (ec) {
    fs::remove_all(work_dir, ec);
    if (auto hit = read_cache_entry(entry_dir)) return finish(hit.value(), true);
  }
  return finish(outcome, false);
}

}  // namespace dicebench::fastpath
