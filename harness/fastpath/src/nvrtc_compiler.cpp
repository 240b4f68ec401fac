// NVRTC compile of the device part (nvrtc_compiler.hpp).
#include "harness/fastpath/src/nvrtc_compiler.hpp"

#include <nvrtc.h>

#include <chrono>
#include <map>
#include <set>
#include <sstream>

#include "harness/fastpath/src/source_scanner.hpp"

namespace dicebench::fastpath {
namespace {

// std:: names the prelude does not define, and the stub header (beside the prelude) that brings
// them from libcu++.
const std::map<std::string, std::string>& std_name_headers() {
  static const std::map<std::string, std::string> table{{"numeric_limits", "limits"},
                                                        {"integral_constant", "type_traits"},
                                                        {"true_type", "type_traits"},
                                                        {"false_type", "type_traits"},
                                                        {"is_same", "type_traits"},
                                                        {"is_same_v", "type_traits"},
                                                        {"enable_if", "type_traits"},
                                                        {"enable_if_t", "type_traits"},
                                                        {"conditional", "type_traits"},
                                                        {"conditional_t", "type_traits"},
                                                        {"is_floating_point", "type_traits"},
                                                        {"is_floating_point_v", "type_traits"},
                                                        {"is_integral", "type_traits"},
                                                        {"is_integral_v", "type_traits"},
                                                        {"is_arithmetic", "type_traits"},
                                                        {"is_arithmetic_v", "type_traits"},
                                                        {"is_signed", "type_traits"},
                                                        {"is_signed_v", "type_traits"},
                                                        {"is_unsigned", "type_traits"},
                                                        {"is_unsigned_v", "type_traits"},
                                                        {"remove_cv", "type_traits"},
                                                        {"remove_cv_t", "type_traits"},
                                                        {"remove_reference", "type_traits"},
                                                        {"remove_reference_t", "type_traits"},
                                                        {"remove_const", "type_traits"},
                                                        {"remove_const_t", "type_traits"},
                                                        {"decay", "type_traits"},
                                                        {"decay_t", "type_traits"},
                                                        {"common_type", "type_traits"},
                                                        {"common_type_t", "type_traits"},
                                                        {"make_unsigned", "type_traits"},
                                                        {"make_unsigned_t", "type_traits"},
                                                        {"is_pointer", "type_traits"},
                                                        {"is_pointer_v", "type_traits"},
                                                        {"swap", "utility"},
                                                        {"move", "utility"},
                                                        {"forward", "utility"},
                                                        {"pair", "utility"},
                                                        {"make_pair", "utility"},
                                                        {"declval", "utility"}};
  return table;
}

std::string check(nvrtcResult result, const char* what) {
  if (result == NVRTC_SUCCESS) return "";
  return std::string(what) + ": " + nvrtcGetErrorString(result);
}

}  // namespace

std::string device_translation_unit(const std::string& device_source) {
  std::set<std::string> headers;
  auto tokens = scan_source(device_source);
  if (tokens) {
    const auto& t = tokens.value();
    for (std::size_t i = 0; i + 2 < t.size(); ++i) {
      if (token_text(device_source, t[i]) != "std" || token_text(device_source, t[i + 1]) != "::") continue;
      auto it = std_name_headers().find(std::string(token_text(device_source, t[i + 2])));
      if (it != std_name_headers().end()) headers.insert(it->second);
    }
  }
  std::string unit = "#include \"dbfp_device_prelude.h\"\n";
  for (const auto& h : headers) unit += "#include \"" + h + "\"\n";
  unit += "#line 1 \"cuda.cu\"\n";
  unit += device_source;
  unit += "\n";
  return unit;
}

std::vector<std::string> nvrtc_options(const CompileFlags& flags, const DeviceToolchain& toolchain) {
  std::vector<std::string> options{
      "--gpu-architecture=" + flags.arch,
      "-std=" + flags.cuda_std,
      // torch.utils.cpp_extension compiles every .cu with these (COMMON_NVCC_FLAGS).
      "-D__CUDA_NO_HALF_OPERATORS__",
      "-D__CUDA_NO_HALF_CONVERSIONS__",
      "-D__CUDA_NO_BFLOAT16_CONVERSIONS__",
      "-D__CUDA_NO_HALF2_OPERATORS__",
      "--include-path=" + toolchain.device_shim_dir,
      "--include-path=" + toolchain.cuda_include_dir,
      "--include-path=" + toolchain.cuda_include_dir + "/cccl",
  };
  options.insert(options.end(), flags.nvrtc_options.begin(), flags.nvrtc_options.end());
  return options;
}

Result<DeviceBinary> compile_device_part(const std::string& device_source,
                                         const std::vector<std::string>& name_expressions, const CompileFlags& flags,
                                         const DeviceToolchain& toolchain) {
  auto started = std::chrono::steady_clock::now();
  std::string unit = device_translation_unit(device_source);
  nvrtcProgram program = nullptr;
  if (auto e = check(nvrtcCreateProgram(&program, unit.c_str(), "cuda_device.cu", 0, nullptr, nullptr),
                     "nvrtcCreateProgram");
      !e.empty())
    return make_error(e);
  struct Destroy {
    nvrtcProgram* p;
    ~Destroy() { nvrtcDestroyProgram(p); }
  } destroy{&program};
  for (const auto& expression : name_expressions) {
    if (auto e = check(nvrtcAddNameExpression(program, expression.c_str()), "nvrtcAddNameExpression"); !e.empty())
      return make_error(e + " (" + expression + ")");
  }
  std::vector<std::string> options = nvrtc_options(flags, toolchain);
  std::vector<const char*> argv;
  for (const auto& o : options) argv.push_back(o.c_str());
  nvrtcResult compiled = nvrtcCompileProgram(program, static_cast<int>(argv.size()), argv.data());
  DeviceBinary binary;
  std::size_t log_size = 0;
  nvrtcGetProgramLogSize(program, &log_size);
  if (log_size > 1) {
    binary.log.resize(log_size);
    nvrtcGetProgramLog(program, binary.log.data());
    while (!binary.log.empty() && (binary.log.back() == '\0' || binary.log.back() == '\n')) binary.log.pop_back();
  }
  if (compiled != NVRTC_SUCCESS) {
    std::string reason = "NVRTC: " + first_error_lines(binary.log, 6);
    if (binary.log.empty()) reason = check(compiled, "NVRTC");
    return make_error(reason);
  }
  std::size_t cubin_size = 0;
  if (auto e = check(nvrtcGetCUBINSize(program, &cubin_size), "nvrtcGetCUBINSize"); !e.empty()) return make_error(e);
  binary.cubin.resize(cubin_size);
  if (auto e = check(nvrtcGetCUBIN(program, binary.cubin.data()), "nvrtcGetCUBIN"); !e.empty()) return make_error(e);
  for (const auto& expression : name_expressions) {
    const char* lowered = nullptr;
    if (auto e = check(nvrtcGetLoweredName(program, expression.c_str(), &lowered), "nvrtcGetLoweredName");
        !e.empty() || lowered == nullptr)
      return make_error("NVRTC found no kernel for " + expression);
    binary.lowered_names.emplace_back(expression, lowered);
  }
  binary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return binary;
}

std::string nvrtc_version() {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

std::string first_error_lines(const std::string& log, int max_lines) {
  std::vector<std::string> lines;
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  std::size_t start = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find("error") != std::string::npos || lines[i].find("undefined reference") != std::string::npos) {
      start = i;
      break;
    }
  }
  std::string out;
  for (std::size_t i = start; i < lines.size() && static_cast<int>(i - start) < max_lines; ++i) {
    if (!out.empty()) out += "\n";
    out += lines[i];
  }
  return out;
}

}  // namespace dicebench::fastpath
