// dicebench-worker: one evaluation worker process (PROTOCOL.md). Before any Python or candidate
// code runs it takes stdin/stdout over as the private channel to the host and points fds 0, 1
// and 2 away from it, then embeds CPython (with the torch found at build time) and hands control
// to dicebench_harness.worker.serve for the rest of its life.
#include <fcntl.h>
#include <pybind11/embed.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace py = pybind11;

namespace {

// An installed worker finds its Python beside itself (<prefix>/share/dicebench/python and
// <prefix>/lib/dicebench/python); one in the build tree uses the source folders of the harness's
// concerns (worker, timing, fastpath: DICEBENCH_HARNESS_PYTHON_PATH) and the build's module folder.
std::string beside_executable(const char* relative, const char* fallback) {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto candidate = exe.parent_path() / relative;
    if (std::filesystem::is_directory(candidate, ec)) return candidate.lexically_normal().string();
  }
  return fallback;
}

// The folders of a PYTHONPATH-style list (DIR:DIR), empty entries dropped.
std::vector<std::string> split_path(const std::string& list) {
  std::vector<std::string> out;
  std::size_t begin = 0;
  while (begin <= list.size()) {
    const std::size_t end = std::min(list.find(':', begin), list.size());
    if (end > begin) out.push_back(list.substr(begin, end - begin));
    begin = end + 1;
  }
  return out;
}

struct Arguments {
  std::string role;
  std::string device = "cpu";
  std::string log = "/dev/null";
  std::string harness_path = beside_executable("../share/dicebench/python", DICEBENCH_HARNESS_PYTHON_PATH);
};

bool parse(int argc, char** argv, Arguments& out) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--runtime-paths")
      out.role = "runtime-paths";
    else if (arg == "--role" && has_value)
      out.role = argv[++i];
    else if (arg == "--device" && has_value)
      out.device = argv[++i];
    else if (arg == "--log" && has_value)
      out.log = argv[++i];
    else if (arg == "--harness-path" && has_value)
      out.harness_path = argv[++i];
    else
      return false;
  }
  return out.role == "reference" || out.role == "candidate" || out.role == "toolchain" || out.role == "runtime-paths";
}

// Moves the channel off fds 0/1 (close-on-exec, so compilers the candidate starts never inherit
// it) and sends everything anyone prints to the log. Returns false when that fails.
bool take_over_channel(const std::string& log, int& channel_in, int& channel_out) {
  channel_in = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
  channel_out = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (channel_in < 0 || channel_out < 0) return false;
  const int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  const int log_fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (null_fd < 0 || log_fd < 0) return false;
  if (dup2(null_fd, STDIN_FILENO) < 0 || dup2(log_fd, STDOUT_FILENO) < 0 || dup2(log_fd, STDERR_FILENO) < 0)
    return false;
  close(null_fd);
  close(log_fd);
  return true;
}

// A worker does not outlive the process that started it. A worker busy in code that never returns
// (a problem whose reference loops forever) would not read the end of its channel, and ran on,
// orphaned, after its host was killed; it now ends within a second of that. (A sandboxed
// candidate's parent is the sandbox's init, which ends the job itself.)
void end_with_parent() {
  const pid_t parent = getppid();
  std::thread([parent] {
    while (getppid() == parent) std::this_thread::sleep_for(std::chrono::seconds(1));
    std::_Exit(137);
  }).detach();
}

}  // namespace

int main(int argc, char** argv) {
  Arguments args;
  if (!parse(argc, argv, args)) {
    std::fprintf(stderr,
                 "usage: dicebench-worker --role reference|candidate|toolchain [--device cpu|cuda] [--log FILE] "
                 "[--harness-path DIR[:DIR...]]\n"
                 "       dicebench-worker --runtime-paths   (the folders it reads, one a line, for the sandbox)\n");
    return 2;
  }
  const bool runtime_paths = args.role == "runtime-paths";
  if (!runtime_paths) end_with_parent();
  int channel_in = -1, channel_out = -1;
  if (!runtime_paths)
    if (!take_over_channel(args.log, channel_in, channel_out)) {
      std::fprintf(stderr, "dicebench-worker: cannot set up the channel and log %s: %s\n", args.log.c_str(),
                   std::strerror(errno));
      return 2;
    }
  try {
    // The interpreter the build found (a virtual environment's python finds its site-packages).
    PyConfig config;
    PyConfig_InitPythonConfig(&config);
    config.parse_argv = 0;
    config.install_signal_handlers = 0;
    PyConfig_SetBytesString(&config, &config.program_name, DICEBENCH_PYTHON_EXECUTABLE);
    py::scoped_interpreter interpreter(&config);
    const auto sys_path = py::module_::import("sys").attr("path");
    std::size_t position = 0;
    for (const auto& folder : split_path(args.harness_path)) sys_path.attr("insert")(position++, folder);
#if DICEBENCH_HAVE_CUDA_MODULE
    sys_path.attr("insert")(position,
                            beside_executable("../lib/dicebench/python", DICEBENCH_MODULE_DIR));  // dicebench_cuda
#endif
    if (runtime_paths) {
      // This executable's tree, the interpreter's prefixes, every folder on sys.path, and the fast
      // path's shim headers (which its compilers read) where the worker runs from the build tree.
      std::error_code ec;
      std::printf("%s\n", std::filesystem::read_symlink("/proc/self/exe", ec).parent_path().parent_path().c_str());
      const auto sys = py::module_::import("sys");
      for (const char* prefix : {"prefix", "base_prefix", "exec_prefix", "base_exec_prefix"})
        std::printf("%s\n", sys.attr(prefix).cast<std::string>().c_str());
      for (const auto& entry : sys_path) std::printf("%s\n", entry.cast<std::string>().c_str());
      if (std::filesystem::is_directory(DICEBENCH_FASTPATH_SOURCE_DIR, ec))
        std::printf("%s\n", DICEBENCH_FASTPATH_SOURCE_DIR);
      return 0;
    }
    const auto worker = py::module_::import("dicebench_harness.worker");
    // serve ends the process itself once its loop has ended and the device memory it held is zeroed
    // (os._exit: no candidate code runs in a finalization); it returns only where it never started.
    const int code =
        worker.attr("serve")(args.role, args.device, channel_in, channel_out, py::arg("exit_at_end") = true)
            .cast<int>();
    std::fflush(nullptr);
    return code;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dicebench-worker: %s\n", e.what());
    return 3;
  }
}
