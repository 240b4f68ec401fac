// The candidate sandbox seen from the host (sandbox_launch.hpp).
#include "harness/client/sandbox_launch.hpp"

#include "core/base/number_text.hpp"

#include "harness/sandbox/protections.hpp"

#include <fmt/format.h>
#include <unistd.h>
#include <boost/process.hpp>
#include <nlohmann/json.hpp>

#include <cctype>
#include <filesystem>
#include <map>
#include <mutex>

namespace dicebench::harness {

namespace bp = boost::process;

std::string SandboxStatus::summary() const { return mode == "off" ? "off (eval.sandbox=off)" : report.summary(); }

std::string SandboxStatus::json() const {
  nlohmann::json out = mode == "off" ? nlohmann::json::object() : nlohmann::json::parse(report.json());
  out["mode"] = mode;
  return out.dump();
}

std::vector<std::string> sandbox_command(const SandboxSettings& s, const std::string& job_dir,
                                         const std::vector<std::string>& hidden) {
  std::vector<std::string> args{s.executable, "--mode", s.mode, "--job-dir", job_dir};
  for (const auto& h : hidden) {
    args.push_back("--hide");
    args.push_back(h);
  }
  for (const auto& path : s.read_only) {
    args.push_back("--read-only");
    args.push_back(path);
  }
  const std::pair<const char*, uint64_t> limits[] = {{"--memory-max", s.memory_max_bytes},
                                                     {"--pids-max", s.pids_max},
                                                     {"--file-size-max", s.file_size_max_bytes},
                                                     {"--open-files-max", s.open_files_max}};
  for (const auto& [flag, value] : limits) {
    if (!value) continue;
    args.push_back(flag);
    args.push_back(std::to_string(value));
  }
  args.push_back("--");
  return args;
}

Result<SandboxStatus> sandbox_status(const SandboxSettings& s) {
  static std::mutex lock;
  static std::map<std::string, Result<SandboxStatus>> known;
  const std::lock_guard guard(lock);
  const std::string key = fmt::format("{}|{}|{}|{}|{}|{}", s.mode, s.executable, s.memory_max_bytes, s.pids_max,
                                      s.file_size_max_bytes, s.open_files_max);
  if (auto it = known.find(key); it != known.end()) return it->second;
  auto probe = [&]() -> Result<SandboxStatus> {
    SandboxStatus status;
    status.mode = s.mode;
    if (s.mode == "off") return status;
    std::vector<std::string> args = sandbox_command(s, "", {});
    // The probe makes its own job folder: drop "--job-dir ''" and the trailing "--".
    args.erase(args.begin() + 3, args.begin() + 5);
    args.back() = "--probe";
    args.erase(args.begin());
    bp::ipstream out;
    std::error_code ec;
    bp::child child(s.executable, bp::args(args), bp::std_out > out, bp::std_err > bp::null, bp::std_in < bp::null, ec);
    if (ec) return make_error(fmt::format("cannot run the sandbox launcher {}: {}", s.executable, ec.message()));
    std::string text, line;
    while (std::getline(out, line)) text += line;
    child.wait(ec);
    try {
      const auto j = nlohmann::json::parse(text);
      for (const auto& [name, state] : j.at("protections").items())
        status.report.set(name, state.value("active", false), state.value("detail", ""));
    } catch (const std::exception&) {
      return make_error(fmt::format("the sandbox launcher {} did not report its protections (exit {})", s.executable,
                                    child.exit_code()));
    }
    if (s.mode == "require" && !status.complete())
      return make_error(fmt::format("eval.sandbox=require, but this machine does not allow: {} ({})",
                                    status.report.missing(), status.report.summary()));
    return status;
  };
  return known.emplace(key, probe()).first->second;
}

std::vector<std::string> worker_runtime_paths(const std::string& worker) {
  static std::mutex lock;
  static std::map<std::string, std::vector<std::string>> known;
  const std::lock_guard guard(lock);
  if (auto it = known.find(worker); it != known.end()) return it->second;
  std::vector<std::string> paths;
  bp::ipstream out;
  std::error_code ec;
  bp::child child(worker, "--runtime-paths", bp::std_out > out, bp::std_err > bp::null, bp::std_in < bp::null, ec);
  if (!ec) {
    for (std::string line; std::getline(out, line);) {
      const auto path = std::filesystem::weakly_canonical(line, ec);
      if (!ec && path.is_absolute() && std::filesystem::is_directory(path, ec) && path != "/")
        paths.push_back(path.string());
    }
    child.wait(ec);
  }
  return known.emplace(worker, std::move(paths)).first->second;
}

std::optional<uint64_t> parse_memory_size(const std::string& text) {
  if (text == "auto") return half_of_physical_memory();
  return parse_size(text);
}

uint64_t half_of_physical_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) / 2 : 0;
}

}  // namespace dicebench::harness
