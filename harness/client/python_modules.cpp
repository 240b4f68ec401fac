// Which Python modules the workers' interpreter lacks (python_modules.hpp).
#include "harness/client/python_modules.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cstdio>
#include <sstream>

namespace dicebench::harness {
namespace {

bool dotted_identifier(const std::string& name) {
  if (name.empty() || name.front() == '.' || name.back() == '.') return false;
  for (const char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')) return false;
  return true;
}

}  // namespace

const char* worker_python() { return DICEBENCH_PYTHON_EXECUTABLE; }

Result<std::vector<std::string>> missing_python_modules(const std::vector<std::string>& modules) {
  if (modules.empty()) return std::vector<std::string>{};
  std::string command = fmt::format(
      "'{}' -c 'import importlib.util as u, sys; print(*(m for m in sys.argv[1:] if "
      "u.find_spec(m) is None))'",
      worker_python());
  for (const auto& module : modules) {
    if (!dotted_identifier(module)) return make_error(fmt::format("'{}' is not a Python module name", module));
    command += " " + module;
  }
  command += " 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return make_error(fmt::format("cannot run {}", worker_python()));
  std::string out;
  char buffer[256];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
  if (pclose(pipe) != 0) return make_error(fmt::format("cannot run the workers' Python {}", worker_python()));
  std::istringstream words(out);
  std::vector<std::string> missing;
  for (std::string word; words >> word;) missing.push_back(word);
  return missing;
}

}  // namespace dicebench::harness
