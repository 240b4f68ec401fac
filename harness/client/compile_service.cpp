// The trusted compile step of the fast path (compile_service.hpp).
#include "harness/client/compile_service.hpp"

#if DICEBENCH_HAVE_FASTPATH
#include "harness/native/fastpath/src/fastpath_compiler.hpp"
#endif

#include <cstdlib>
#include <regex>

namespace dicebench::harness {
namespace {

nlohmann::json declined(const std::string& reason) {
  return {{"ok", false}, {"reason", reason}, {"key", ""}, {"entry_dir", ""}, {"cache_hit", false},
          {"kernels", nlohmann::json::array()}, {"functions", nlohmann::json::array()}, {"seconds", 0.0},
          {"split_seconds", 0.0}, {"nvrtc_seconds", 0.0}, {"gxx_seconds", 0.0}};
}

constexpr size_t kMaxRequestBytes = 16u << 20;

}  // namespace

nlohmann::json compile_for_candidate(const nlohmann::json& request, const std::string& cache_dir) {
#if DICEBENCH_HAVE_FASTPATH
  using namespace dicebench::fastpath;
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
    return declined("malformed compile request (name and arch are strings)");
  r.name = request["name"].get<std::string>();
  r.arch = request["arch"].get<std::string>();
  if (!std::regex_match(r.arch, std::regex("sm_[0-9]{2,3}a?"))) return declined("malformed compile request (arch " + r.arch + ")");
  if (!strings("cpp_sources", r.cpp_sources) || !strings("cuda_sources", r.cuda_sources) ||
      !strings("functions", r.functions) || !strings("extra_cflags", r.extra_cflags) ||
      !strings("extra_cuda_cflags", r.extra_cuda_cflags) || !strings("extra_ldflags", r.extra_ldflags))
    return declined("malformed compile request (sources, functions and flags are lists of strings)");
  if (bytes > kMaxRequestBytes) return declined("compile request over 16 MiB");
  Toolchain toolchain = default_toolchain(cache_dir);
  // The same overrides the candidate's dicebench_fastpath honours (an installed tree).
  if (const char* shim = std::getenv("DICEBENCH_FASTPATH_SHIM_DIR"); shim && *shim) toolchain.glue.shim_dir = shim;
  if (const char* device = std::getenv("DICEBENCH_FASTPATH_DEVICE_SHIM_DIR"); device && *device)
    toolchain.device.device_shim_dir = device;
  const CompileOutcome o = compile_with_fast_path(r, toolchain);
  nlohmann::json out = declined(o.reason);
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
#else
  (void)request;
  (void)cache_dir;
  return declined("this dicebench was built without the fast path (no NVRTC)");
#endif
}

}  // namespace dicebench::harness
