// Which load_inline calls may make a precompiled torch/extension.h (precompiled_header_calls.hpp).
#include "harness/client/precompiled_header_calls.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <regex>
#include <string>
#include <string_view>

namespace dicebench::harness {

namespace {

// Flags that name no file: optimisation, language standard, warnings, debug information, simple
// macros and a few code-generation switches candidates use.
bool plain_flag(const std::string& flag) {
  static const std::regex kPlain(
      R"(-O[0-3sz]?|-Ofast|-std=(c|gnu)\+\+[0-9a-z]{2}|-W[a-z0-9=+-]*|-w|-g[0-3]?|-ffast-math|-funroll-loops|)"
      R"(-fno-strict-aliasing|-fopenmp|-march=native|-mtune=native|-U[A-Za-z_][A-Za-z0-9_]*|)"
      R"(-D[A-Za-z_][A-Za-z0-9_]*(=[A-Za-z0-9_.+-]*)?)");
  return flag.size() <= 200 && std::regex_match(flag, kPlain);
}

bool falsy(const nlohmann::json& arguments, const char* name) {
  const auto found = arguments.find(name);
  if (found == arguments.end() || found->is_null()) return true;
  if (found->is_boolean()) return !found->get<bool>();
  if (found->is_string() || found->is_array()) return found->empty();
  return false;
}

// Whether load_inline builds with CUDA: its with_cuda, or (None) whether it has cuda_sources.
bool with_cuda(const nlohmann::json& arguments) {
  const auto given = arguments.find("with_cuda");
  if (given != arguments.end() && given->is_boolean()) return given->get<bool>();
  return !falsy(arguments, "cuda_sources");
}

// BUILD_ENVIRONMENT variables (toolchain.py) that name a compiler or a CUDA: a call may make a
// header only with this host's own values (the candidate's process inherits them), or none.
constexpr std::array<std::string_view, 7> kToolVariables = {
    "CXX", "CC", "CUDA_HOME", "CUDA_PATH", "PYTORCH_NVCC", "NVCC_CCBIN", "TORCH_DONT_CHECK_COMPILER_ABI"};

}  // namespace

std::optional<nlohmann::json> header_call_for(const nlohmann::json& call) {
  if (!call.is_object() || !call.contains("arguments") || !call["arguments"].is_object()) return std::nullopt;
  const nlohmann::json& arguments = call["arguments"];
  for (const char* name : {"extra_include_paths", "with_sycl", "sycl_sources", "no_implicit_headers", "use_pch"})
    if (!falsy(arguments, name)) return std::nullopt;
  nlohmann::json flags = nlohmann::json::array();
  if (const auto given = arguments.find("extra_cflags"); given != arguments.end() && !given->is_null()) {
    if (!given->is_array()) return std::nullopt;
    for (const auto& flag : *given) {
      if (!flag.is_string() || !plain_flag(flag.get<std::string>())) return std::nullopt;
      flags.push_back(flag);
    }
  }
  nlohmann::json environment = nlohmann::json::object();
  if (const auto given = call.find("environment"); given != call.end() && given->is_object())
    for (const auto& [name, value] : given->items()) {
      const bool tool = std::find(kToolVariables.begin(), kToolVariables.end(), name) != kToolVariables.end();
      if (tool && !value.is_null()) {
        const char* own = std::getenv(name.c_str());
        if (!value.is_string() || !own || value.get<std::string>() != own) return std::nullopt;
        environment[name] = value;
      }
      // The architectures shape only CUDA's flags, but torch needs them to write a CUDA build.
      if (name == "TORCH_CUDA_ARCH_LIST" && value.is_string() && value.get<std::string>().size() <= 200)
        environment[name] = value;
    }
  return nlohmann::json{
      {"arguments",
       {{"name", "dicebench_pch"}, {"cpp_sources", ""}, {"extra_cflags", flags}, {"with_cuda", with_cuda(arguments)}}},
      {"environment", environment}};
}

}  // namespace dicebench::harness
