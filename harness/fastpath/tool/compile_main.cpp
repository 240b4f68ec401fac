// dicebench-compile: the fast path's trusted compile step as a process of its own. It reads one
// framed JSON compile request on stdin (the "request" of PROTOCOL.md's candidate.compile),
// compiles it with the cache in --cache-dir, of which it is the only writer, writes one framed
// JSON outcome on stdout and exits. The host runs it inside dicebench-sandbox with the cache as
// its job folder and kills it past the candidate's compile time limit: the sources are hostile
// input, and NVRTC has no time limit of its own. A malformed request is ok=false with the
// reason, so the candidate takes torch's toolchain.
#include "harness/client/compile_service.hpp"
#include "harness/client/frame_io.hpp"
#include "harness/fastpath/src/fastpath_compiler.hpp"

#include <unistd.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <regex>
#include <string>

namespace {

using namespace dicebench::fastpath;

constexpr size_t kMaxRequestBytes = 16u << 20;

using dicebench::harness::declined_compile;

nlohmann::json compile(const nlohmann::json& request, const std::string& cache_dir) {
  CompileRequest r;
  size_t bytes = 0;
  auto strings = [&](const char* key, std::vector<std::string>& out) {
    const auto it = request.find(key);
    if (it == request.end() || it->is_null()) return true;
    if (!it->is_array()) return false;
    for (const auto& item : *it) {
      if (!item.is_string()) return false;
      out.push_back(item.get<std::string>());
      bytes += out.back().size();
    }
    return true;
  };
  if (!request.is_object() || !request.contains("name") || !request["name"].is_string() || !request.contains("arch") ||
      !request["arch"].is_string())
    return declined_compile("malformed compile request (name and arch are strings)");
  r.name = request["name"].get<std::string>();
  r.arch = request["arch"].get<std::string>();
  if (!std::regex_match(r.arch, std::regex("sm_[0-9]{2,3}a?")))
    return declined_compile("malformed compile request (arch " + r.arch + ")");
  if (!strings("cpp_sources", r.cpp_sources) || !strings("cuda_sources", r.cuda_sources) ||
      !strings("functions", r.functions) || !strings("extra_cflags", r.extra_cflags) ||
      !strings("extra_cuda_cflags", r.extra_cuda_cflags) || !strings("extra_ldflags", r.extra_ldflags))
    return declined_compile("malformed compile request (sources, functions and flags are lists of strings)");
  if (bytes > kMaxRequestBytes) return declined_compile("compile request over 16 MiB");
  Toolchain toolchain = default_toolchain(cache_dir);
  // The same overrides the candidate's dicebench_fastpath honours (an installed tree).
  if (const char* shim = std::getenv("DICEBENCH_FASTPATH_SHIM_DIR"); shim && *shim) toolchain.glue.shim_dir = shim;
  if (const char* device = std::getenv("DICEBENCH_FASTPATH_DEVICE_SHIM_DIR"); device && *device)
    toolchain.device.device_shim_dir = device;
  const CompileOutcome o = compile_with_fast_path(r, toolchain);
  nlohmann::json out = declined_compile(o.reason);
  out["ok"] = o.ok;
  out["key"] = o.key;
  out["entry_dir"] = o.entry_dir;
  out["cache_hit"] = o.cache_hit;
  for (const auto& [expr, lowered] : o.kernels) out["kernels"].push_back({expr, lowered});
  out["functions"] = o.functions;
  out["seconds"] = o.total_seconds;
  out["split_seconds"] = o.split_seconds;
  out["nvrtc_seconds"] = o.nvrtc_seconds;
  out["gxx_seconds"] = o.gxx_seconds;
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || std::strcmp(argv[1], "--cache-dir") != 0) {
    std::fprintf(stderr, "usage: dicebench-compile --cache-dir DIR < framed request > framed outcome\n");
    return 2;
  }
  std::string payload;
  const auto status = dicebench::harness::read_frame(STDIN_FILENO, &payload,
                                                     std::chrono::steady_clock::now() + std::chrono::minutes(1));
  nlohmann::json outcome;
  if (status != dicebench::harness::FrameStatus::ok) {
    outcome = declined_compile("no compile request arrived");
  } else {
    try {
      outcome = compile(nlohmann::json::parse(payload), argv[2]);
    } catch (const std::exception& e) {
      outcome = declined_compile(std::string("malformed compile request: ") + e.what());
    }
  }
  return dicebench::harness::write_frame(STDOUT_FILENO,
                                         outcome.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))
             ? 0
             : 1;
}
