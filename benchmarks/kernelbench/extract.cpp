// Code-block extraction from completions, mirroring KernelBench's extract_first_code.
#include "benchmarks/kernelbench/extract.hpp"

#include "benchmarks/kernelbench/pytext.hpp"

namespace dicebench::kernelbench {

const std::vector<std::string>& default_language_tags() {
  static const std::vector<std::string> tags = {"python", "cpp"};
  return tags;
}

std::optional<std::string> extract_candidate(std::string_view completion, Which which) {
  return extract_candidate(completion, which, default_language_tags());
}

std::optional<std::string> extract_candidate(std::string_view completion, Which which,
                                             const std::vector<std::string>& language_tags) {
  constexpr std::string_view kFence = "```";
  const std::string_view text = python_strip(completion);
  std::optional<std::string_view> block;
  std::size_t pos = 0;
  while (true) {
    // If the first opening fence has no closing fence, no later one has either, so the regex
    // search reduces to: next fence, then the next fence after it.
    const std::size_t open = text.find(kFence, pos);
    if (open == std::string_view::npos) break;
    const std::size_t close = text.find(kFence, open + kFence.size());
    if (close == std::string_view::npos) break;
    block = text.substr(open + kFence.size(), close - open - kFence.size());
    if (which == Which::First) break;
    pos = close + kFence.size();
  }
  if (!block) return std::nullopt;
  std::string_view code = python_strip(*block);
  for (const std::string& tag : language_tags) {
    if (code.substr(0, tag.size()) == tag) code = python_strip(code.substr(tag.size()));
  }
  return std::string(code);
}

}  // namespace dicebench::kernelbench
