// Python's text-mode newline handling (text_mode.hpp).
#include "benchmarks/kernelbench/text_mode.hpp"

namespace dicebench::kernelbench {

std::string universal_newlines(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (bytes[i] == '\r') {
      out.push_back('\n');
      if (i + 1 < bytes.size() && bytes[i + 1] == '\n') ++i;
    } else {
      out.push_back(bytes[i]);
    }
  }
  return out;
}

}  // namespace dicebench::kernelbench
