// The reproducibility record of a run, read without creating a CUDA context.
#include "core/host/repro.hpp"
#include "core/base/whole_file.hpp"

#include "core/base/text.hpp"

#include <dicebench_build_info.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>

namespace dicebench::host {
namespace {

std::optional<std::string> command_output(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return std::nullopt;
  std::string out;
  std::array<char, 512> buffer{};
  while (size_t n = fread(buffer.data(), 1, buffer.size(), pipe)) out.append(buffer.data(), n);
  if (pclose(pipe) != 0) return std::nullopt;
  return out;
}

std::optional<std::string> cuda_toolkit_version() {
  std::vector<std::string> roots;
  if (const char* home = std::getenv("CUDA_HOME")) roots.push_back(home);
  roots.push_back("/usr/local/cuda");
  for (const auto& root : roots) {
    if (const auto version = read_whole_file(root + "/version.json")) {
      try {
        return nlohmann::json::parse(*version).at("cuda").at("version").get<std::string>();
      } catch (const std::exception&) {}
    }
    // Toolkits without version.json (the pip-packaged layout): CUDA_VERSION in cuda.h, e.g. 13000.
    if (const auto header = read_whole_file(root + "/include/cuda.h")) {
      const std::string& text = *header;
      const std::string marker = "#define CUDA_VERSION ";
      if (const size_t at = text.find(marker); at != std::string::npos) {
        const long version = std::strtol(text.c_str() + at + marker.size(), nullptr, 10);
        if (version > 0) return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
      }
    }
  }
  return std::nullopt;
}

nlohmann::json optional_json(const std::optional<std::string>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

}  // namespace

std::string ReproRecord::to_json() const {
  return nlohmann::json{{"dicebench_version", dicebench_version},
                        {"git_sha", git_sha},
                        {"host", host},
                        {"gpu", optional_json(gpu)},
                        {"driver_version", optional_json(driver_version)},
                        {"cuda_version", optional_json(cuda_version)},
                        {"torch_version", optional_json(torch_version)},
                        {"sandbox", sandbox_json ? nlohmann::json::parse(*sandbox_json) : nlohmann::json()}}
      .dump();
}

ReproRecord collect_repro_record() {
  ReproRecord record;
  record.dicebench_version = DICEBENCH_VERSION;
  record.git_sha = DICEBENCH_GIT_SHA;
  char name[256] = {};
  record.host = gethostname(name, sizeof name - 1) == 0 ? name : "unknown";
  record.cuda_version = cuda_toolkit_version();
  if (auto out = command_output("nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null")) {
    std::vector<std::string> gpus;
    std::set<std::string> drivers;
    for (const auto& line : split(*out, '\n')) {
      const auto fields = split(line, ',');
      if (fields.size() < 2) continue;
      gpus.emplace_back(trim(fields[0]));
      drivers.emplace(trim(fields[1]));
    }
    if (!gpus.empty()) {
      record.gpu = join(gpus, ", ");
      record.driver_version = join(std::vector<std::string>(drivers.begin(), drivers.end()), ", ");
    }
  }
  return record;
}

std::vector<std::string> visible_gpus() {
  std::vector<std::string> gpus;
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) {
    for (const auto& entry : split(visible, ',')) {
      const std::string id(trim(entry));
      if (!id.empty()) gpus.push_back(id);
    }
    return gpus;
  }
  if (auto out = command_output("nvidia-smi -L 2>/dev/null"))
    for (const auto& line : split(*out, '\n'))
      if (line.starts_with("GPU ")) gpus.push_back(std::to_string(gpus.size()));
  return gpus;
}

}  // namespace dicebench::host
