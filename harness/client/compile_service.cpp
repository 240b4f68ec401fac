// The trusted compile step of the fast path, seen from the host (compile_service.hpp).
#include "harness/client/compile_service.hpp"

#include "harness/client/frame_io.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>
#include <boost/process.hpp>

#include <filesystem>

namespace dicebench::harness {

namespace bp = boost::process;

namespace {

// A private file for the compile step's stderr, and the last line it held (why it failed).
struct ErrorLog {
  std::string path;
  ErrorLog() {
    std::string pattern = (std::filesystem::temp_directory_path() / "dicebench-compile-XXXXXX").string();
    const int fd = mkstemp(pattern.data());
    if (fd >= 0) {
      close(fd);
      path = pattern;
    }
  }
  ~ErrorLog() {
    if (!path.empty()) unlink(path.c_str());
  }
  std::string last_line() const {
    std::string text(4096, '\0');
    const int fd = path.empty() ? -1 : open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return "";
    const off_t size = lseek(fd, 0, SEEK_END);
    const off_t start = size > static_cast<off_t>(text.size()) ? size - static_cast<off_t>(text.size()) : 0;
    const ssize_t got = pread(fd, text.data(), text.size(), start);
    close(fd);
    text.resize(got > 0 ? static_cast<size_t>(got) : 0);
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    return text.substr(text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1);
  }
};

}  // namespace

nlohmann::json declined_compile(const std::string& reason) {
  return {{"ok", false},
          {"reason", reason},
          {"key", ""},
          {"entry_dir", ""},
          {"cache_hit", false},
          {"kernels", nlohmann::json::array()},
          {"functions", nlohmann::json::array()},
          {"seconds", 0.0},
          {"split_seconds", 0.0},
          {"nvrtc_seconds", 0.0},
          {"gxx_seconds", 0.0}};
}

nlohmann::json compile_for_candidate(const nlohmann::json& request, const CompileService& service,
                                     std::chrono::steady_clock::time_point deadline) {
  const auto& declined = declined_compile;
  std::vector<std::string> command;
  if (service.sandbox.mode != "off") {
    // Its job folder is the cache: the one place it may write (bound after the read-only folders,
    // the cache among them, so it stays writable). Nothing of the candidates' CUDA view.
    command = sandbox_command(service.sandbox, service.cache_dir, {});
  }
  command.insert(command.end(), {service.executable, "--cache-dir", service.cache_dir});
  const std::string program = command.front();
  command.erase(command.begin());
  bp::pipe to_compiler, from_compiler;
  bp::group group;
  std::error_code ec;
  const ErrorLog errors;
  bp::child child(program, bp::args(command), bp::std_in<to_compiler, bp::std_out> from_compiler,
                  bp::std_err > (errors.path.empty() ? std::string("/dev/null") : errors.path), group, ec);
  if (ec) return declined(fmt::format("cannot start the compile step {}: {}", program, ec.message()));
  to_compiler.assign_source(-1);
  from_compiler.assign_sink(-1);
  std::string payload;
  const bool sent =
      write_frame(to_compiler.native_sink(), request.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  to_compiler.close();
  const FrameStatus status = sent ? read_frame(from_compiler.native_source(), &payload, deadline) : FrameStatus::closed;
  group.terminate(ec);  // it has answered, or it is killed here
  child.wait(ec);
  if (status == FrameStatus::timeout)
    return declined("the compile step ran past the candidate's compile time limit and was killed");
  if (status != FrameStatus::ok) {
    const std::string why = errors.last_line();
    return declined("the compile step ended without an answer" + (why.empty() ? std::string() : ": " + why));
  }
  try {
    return nlohmann::json::parse(payload);
  } catch (const std::exception& e) {
    return declined(std::string("the compile step's answer is not JSON: ") + e.what());
  }
}

}  // namespace dicebench::harness
