// Host glue builds for the fast compile path (glue_compiler.hpp).
#include "harness/fastpath/src/glue_compiler.hpp"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>

#include "harness/fastpath/src/file_lock.hpp"
#include "harness/fastpath/src/nvrtc_compiler.hpp"
#include "harness/fastpath/src/subprocess.hpp"

namespace dicebench::fastpath {
namespace fs = std::filesystem;
namespace {

std::string c_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

// No -O: the optimization level is the candidate's (host_optimization), as in torch's build.
std::vector<std::string> base_flags(const GlueToolchain& t, const std::string& std_version) {
  return {t.cxx, "-std=" + std_version, "-fPIC", "-fvisibility=hidden", "-w"};
}

std::vector<std::string> include_flags(const GlueToolchain& t, const std::string& pch_dir) {
  std::vector<std::string> flags;
  if (!pch_dir.empty()) flags.push_back("-I" + pch_dir);
  flags.push_back("-I" + t.shim_dir);
  flags.push_back("-I" + t.cuda_include_dir);
  return flags;
}

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  return static_cast<bool>(out);
}

std::string random_suffix() {
  std::random_device rd;
  return std::to_string(getpid()) + "-" + std::to_string(rd());
}

// The compiler's first error, without the work folder's path.
std::string compiler_error(const std::string& output, const std::string& work_dir) {
  std::string text = first_error_lines(output, 8);
  for (std::size_t pos; (pos = text.find(work_dir + "/")) != std::string::npos;) text.erase(pos, work_dir.size() + 1);
  return text;
}

}  // namespace

std::string glue_cpp_unit(const GlueInput& input) {
  std::string unit = "#include <dbfp/prelude_cpp.h>\n#line 1 \"main.cpp\"\n";
  unit += input.cpp_source;
  unit += "\n#line 1 \"dbfp_bindings.cpp\"\n";
  unit += "static const dbfp_function_info dbfp_functions_[] = {\n";
  for (const auto& f : input.functions) unit += "  ::dbfp::describe<&" + f + ">(" + c_string(f) + "),\n";
  if (input.functions.empty()) unit += "  {nullptr, 0, nullptr, 0, nullptr},\n";
  unit += "};\n";
  unit += "DBFP_EXPORT uint32_t dbfp_glue_abi_version(void) { return DBFP_ABI_VERSION; }\n";
  unit += "DBFP_EXPORT void dbfp_glue_init(const dbfp_api* api) { ::dbfp::g_api = api; }\n";
  unit += "DBFP_EXPORT const char* dbfp_glue_error(void) { return ::dbfp::g_glue_error.c_str(); }\n";
  unit += "DBFP_EXPORT int32_t dbfp_glue_functions(const dbfp_function_info** out) {\n";
  unit += "  *out = dbfp_functions_;\n  return " + std::to_string(input.functions.size()) + ";\n}\n";
  return unit;
}

std::string glue_cuda_unit(const GlueInput& input) {
  std::string unit = "#include <dbfp/prelude_cuda.h>\n#line 1 \"cuda.cu\"\n";
  unit += input.cuda_host_source;
  unit += "\n#line 1 \"dbfp_kernels.cpp\"\n";
  std::size_t n = input.name_expressions.size();
  unit += "namespace dbfp { void* g_kernel_slots[" + std::to_string(n > 0 ? n : 1) + "]; }\n";
  unit += "DBFP_EXPORT int32_t dbfp_glue_kernels(void*** slots, const char* const** names) {\n";
  unit += "  static const char* const dbfp_names_[] = {";
  for (const auto& e : input.name_expressions) unit += c_string(e) + ", ";
  unit += "nullptr};\n  *slots = ::dbfp::g_kernel_slots;\n  *names = dbfp_names_;\n";
  unit += "  return " + std::to_string(n) + ";\n}\n";
  return unit;
}

std::string compiler_version(const std::string& cxx) {
  auto outcome = run_process({cxx, "--version"}, 30);
  if (!outcome || outcome->exit_code != 0) return cxx + " (version unknown)";
  std::string first = outcome->output.substr(0, outcome->output.find('\n'));
  return first;
}

namespace {

// The two preludes precompiled with one optimization flag, in their own folder: g++ uses a
// precompiled header only where the macros -O defines (__OPTIMIZE__, __NO_INLINE__,
// __OPTIMIZE_SIZE__) are those of the unit that includes it.
std::string preludes_for(const GlueToolchain& toolchain, const std::string& toolchain_key,
                         const std::string& optimization) {
  if (toolchain.pch_root.empty()) return "";
  std::error_code ec;
  fs::create_directories(toolchain.pch_root, ec);
  const std::string folder = toolchain_key + optimization;
  std::string final_dir = toolchain.pch_root + "/" + folder;
  std::string done = final_dir + "/dbfp/prelude_cuda.h.gch";
  if (fs::exists(done, ec)) return final_dir;
  // One builder at a time; the others wait and then find it built.
  std::string lock_path = toolchain.pch_root + "/" + folder + ".lock";
  const ExclusiveFileLock lock(lock_path);
  if (fs::exists(done, ec)) return final_dir;
  std::string tmp = toolchain.pch_root + "/tmp-" + random_suffix();
  fs::create_directories(tmp + "/dbfp", ec);
  if (ec) return "";
  // Both at once.
  std::vector<ChildProcess> builders;
  bool ok = true;
  for (const char* which : {"cpp", "cuda"}) {
    std::vector<std::string> argv = base_flags(toolchain, "c++17");
    argv.push_back(optimization);
    for (auto& f : include_flags(toolchain, "")) argv.push_back(f);
    argv.insert(argv.end(), {"-x", "c++-header", toolchain.shim_dir + "/dbfp/prelude_" + which + ".h", "-o",
                             tmp + "/dbfp/prelude_" + which + ".h.gch"});
    auto child = ChildProcess::start(argv);
    if (child)
      builders.push_back(std::move(child.value()));
    else
      ok = false;
  }
  for (auto& builder : builders) ok = builder.finish(toolchain.timeout_seconds).exit_code == 0 && ok;
  if (ok) fs::rename(tmp, final_dir, ec);
  fs::remove_all(tmp, ec);
  return fs::exists(done) ? final_dir : "";
}

}  // namespace

PreludeFolders ensure_precompiled_preludes(const GlueToolchain& toolchain, const std::string& toolchain_key,
                                           const GlueInput& input) {
  PreludeFolders folders;
  folders.cpp = preludes_for(toolchain, toolchain_key, host_optimization(input.flags.cpp_host_flags));
  if (input.has_cuda)
    folders.cuda = preludes_for(toolchain, toolchain_key, host_optimization(input.flags.cuda_host_flags));
  return folders;
}

Result<GlueBuild> build_glue(const GlueInput& input, const GlueToolchain& toolchain, const PreludeFolders& preludes,
                             const std::string& work_dir, const std::string& output_so, bool* deterministic) {
  *deterministic = false;
  auto started = std::chrono::steady_clock::now();
  GlueBuild build;
  std::string cpp_path = work_dir + "/main.cpp";
  std::string cuda_path = work_dir + "/cuda.cpp";
  if (!write_file(cpp_path, glue_cpp_unit(input))) return make_error("cannot write " + cpp_path);
  if (input.has_cuda && !write_file(cuda_path, glue_cuda_unit(input))) return make_error("cannot write " + cuda_path);

  auto compile_argv = [&](const std::string& std_version, const std::string& pch_dir,
                          const std::vector<std::string>& extra, const std::string& source, const std::string& object) {
    std::vector<std::string> argv = base_flags(toolchain, std_version);
    for (auto& f : include_flags(toolchain, pch_dir)) argv.push_back(f);
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.insert(argv.end(), {"-c", source, "-o", object});
    return argv;
  };
  // The precompiled preludes are offered to every compile: g++ checks that the flags and the
  // macros defined on the command line agree with those they were built with, and reads the
  // headers themselves when they do not (another -std, or a -D that the prelude tests).
  build.used_pch = !preludes.cpp.empty() || !preludes.cuda.empty();
  auto cpp_child = ChildProcess::start(
      compile_argv(input.flags.cpp_std, preludes.cpp, input.flags.cpp_host_flags, cpp_path, work_dir + "/main.o"));
  if (!cpp_child) return cpp_child.error();
  std::optional<ChildProcess> cuda_child;
  if (input.has_cuda) {
    auto started_cuda = ChildProcess::start(compile_argv(input.flags.cuda_std, preludes.cuda,
                                                         input.flags.cuda_host_flags, cuda_path, work_dir + "/cuda.o"));
    if (!started_cuda) return started_cuda.error();
    cuda_child.emplace(std::move(started_cuda.value()));
  }
  ProcessOutcome cpp = cpp_child.value().finish(toolchain.timeout_seconds);
  build.cpp_seconds = cpp.seconds;
  std::optional<ProcessOutcome> cuda;
  if (cuda_child) {
    cuda = cuda_child->finish(toolchain.timeout_seconds);
    build.cuda_seconds = cuda->seconds;
  }
  // A diagnostic from the CUDA glue names the candidate's own code most often; report it first.
  for (const ProcessOutcome* outcome : {cuda ? &*cuda : nullptr, &cpp}) {
    if (!outcome) continue;
    if (outcome->timed_out) return make_error("g++ timed out");
    if (outcome->exit_code != 0) {
      *deterministic = outcome->exit_code == 1 && outcome->signal == 0;
      std::string which = outcome == &cpp ? "cpp_sources" : "cuda_sources";
      return make_error("g++ (" + which + " glue): " + compiler_error(outcome->output, work_dir));
    }
  }
  std::vector<std::string> link{toolchain.cxx, "-shared", "-o", output_so, work_dir + "/main.o"};
  if (input.has_cuda) link.push_back(work_dir + "/cuda.o");
  link.push_back("-L" + toolchain.cuda_library_dir);
  link.push_back("-L" + toolchain.cuda_library_dir + "/stubs");
  link.push_back("-Wl,-z,defs");
  link.push_back("-Wl,--as-needed");
  for (const auto& lib : input.host_libraries) link.push_back("-l" + lib);
  for (const auto& f : input.flags.link_flags) link.push_back(f);
  link.push_back("-lcudart");
  auto linked = run_process(link, toolchain.timeout_seconds);
  if (!linked) return linked.error();
  build.link_seconds = linked->seconds;
  if (linked->timed_out) return make_error("linking the glue timed out");
  if (linked->exit_code != 0) {
    *deterministic = linked->exit_code == 1;
    return make_error("linking the glue: " + compiler_error(linked->output, work_dir));
  }
  build.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return build;
}

}  // namespace dicebench::fastpath
