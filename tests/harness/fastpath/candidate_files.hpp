// The fast path's test candidates (tests/harness/fastpath/candidates/*.py): KernelBench-style programs
// whose load_inline arguments the C++ tests read back out of the Python text. Each file starts
// with a line `# fastpath-test: functions=a,b expect=nvrtc|fallback [reason=word] [requires=cudnn]`.
// A candidate that requires cuDNN is expected to fall back (reason: cudnn) where the toolkit's
// folders have no cudnn.h and libcudnn.so.
#pragma once

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "harness/fastpath/src/fastpath_compiler.hpp"

namespace fastpath_test {

struct TestCandidate {
  std::string name;
  std::string path;
  std::string cuda_source;  // empty when the candidate has none
  std::string cpp_source;
  std::vector<std::string> functions;
  std::vector<std::string> extra_cflags;
  std::vector<std::string> extra_cuda_cflags;
  std::vector<std::string> extra_ldflags;
  bool expect_fast_path = true;
  std::string reason_hint;  // a word the fallback reason should hold
};

// cudnn.h and libcudnn.so where the glue compiler looks (the CUDA toolkit's folders).
inline bool cudnn_available() {
  return std::filesystem::exists(std::string(DICEBENCH_FASTPATH_CUDA_INCLUDE_DIR) + "/cudnn.h") &&
         std::filesystem::exists(std::string(DICEBENCH_FASTPATH_CUDA_LIBRARY_DIR) + "/libcudnn.so");
}

inline std::string candidates_dir() { return std::string(DICEBENCH_SOURCE_DIR) + "/tests/harness/fastpath/candidates"; }

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// The string literal assigned to `name` (r"""...""", """...""" or "...").
inline std::string string_assigned(const std::string& text, const std::string& name) {
  std::size_t at = text.find("\n" + name + " = ");
  if (at == std::string::npos) return "";
  std::size_t start = at + name.size() + 4;
  if (text.compare(start, 4, "r\"\"\"") == 0 || text.compare(start, 3, "\"\"\"") == 0) {
    start += text[start] == 'r' ? 4 : 3;
    return text.substr(start, text.find("\"\"\"", start) - start);
  }
  if (text[start] == '"') return text.substr(start + 1, text.find('"', start + 1) - start - 1);
  return "";
}

// A keyword argument's list of string literals: extra_cuda_cflags=["-O3", "--use_fast_math"].
inline std::vector<std::string> list_argument(const std::string& text, const std::string& name) {
  std::vector<std::string> out;
  std::size_t at = text.find(name + "=[");
  if (at == std::string::npos) return out;
  std::size_t end = text.find(']', at);
  for (std::size_t q = text.find('"', at); q < end; q = text.find('"', q + 1)) {
    std::size_t close = text.find('"', q + 1);
    out.push_back(text.substr(q + 1, close - q - 1));
    q = close;
  }
  return out;
}

inline TestCandidate load_candidate(const std::string& path) {
  TestCandidate c;
  c.path = path;
  c.name = std::filesystem::path(path).stem().string();
  std::string text = read_text(path);
  std::string header = text.substr(0, text.find('\n'));
  std::istringstream words(header);
  for (std::string word; words >> word;) {
    if (word.rfind("functions=", 0) == 0) {
      std::string list = word.substr(10);
      for (std::size_t start = 0; start <= list.size();) {
        std::size_t comma = list.find(',', start);
        if (comma == std::string::npos) comma = list.size();
        c.functions.push_back(list.substr(start, comma - start));
        start = comma + 1;
      }
    } else if (word == "expect=fallback") {
      c.expect_fast_path = false;
    } else if (word.rfind("reason=", 0) == 0) {
      c.reason_hint = word.substr(7);
    } else if (word == "requires=cudnn" && !cudnn_available()) {
      c.expect_fast_path = false;
      c.reason_hint = "cudnn";
    }
  }
  c.cuda_source = string_assigned(text, "cuda_source");
  c.cpp_source = string_assigned(text, "cpp_source");
  c.extra_cflags = list_argument(text, "extra_cflags");
  c.extra_cuda_cflags = list_argument(text, "extra_cuda_cflags");
  c.extra_ldflags = list_argument(text, "extra_ldflags");
  return c;
}

inline std::vector<TestCandidate> load_candidates() {
  std::vector<std::string> paths;
  for (const auto& entry : std::filesystem::directory_iterator(candidates_dir()))
    if (entry.path().extension() == ".py") paths.push_back(entry.path().string());
  std::sort(paths.begin(), paths.end());
  std::vector<TestCandidate> out;
  for (const auto& p : paths) out.push_back(load_candidate(p));
  return out;
}

inline dicebench::fastpath::CompileRequest request_for(const TestCandidate& c, const std::string& arch = "sm_90") {
  dicebench::fastpath::CompileRequest r;
  r.name = c.name;
  r.cpp_sources = {c.cpp_source};
  if (!c.cuda_source.empty()) r.cuda_sources = {c.cuda_source};
  r.functions = c.functions;
  r.extra_cflags = c.extra_cflags;
  r.extra_cuda_cflags = c.extra_cuda_cflags;
  r.extra_ldflags = c.extra_ldflags;
  r.arch = arch;
  return r;
}

// A fresh folder under the system's temporary folder, removed at the end of the scope.
class TempFolder {
 public:
  explicit TempFolder(const std::string& stem) {
    std::string pattern = (std::filesystem::temp_directory_path() / (stem + "-XXXXXX")).string();
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    path_ = mkdtemp(buffer.data());
  }
  ~TempFolder() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace fastpath_test
