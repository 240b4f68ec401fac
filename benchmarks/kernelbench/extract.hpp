// Answer extraction: the code block of a model's completion, as KernelBench extracts it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dicebench::kernelbench {

enum class Which { First, Last };

// The language tags KernelBench strips: its generation scripts call
// extract_first_code(text, ["python", "cpp"]).
const std::vector<std::string>& default_language_tags();

// Mirrors KernelBench src/kernelbench/utils.py extract_first_code / extract_last_code (commit
// 15a2b4f60c0f8d55d8d13deb041e9f0ec78b751d): the completion is stripped, fenced blocks are the
// non-overlapping matches of re"```(.*?)```" (DOTALL) from the left, the chosen block's text is
// stripped, then each tag in order is removed from its start (followed by another strip) when the
// text starts with it. A final fence without a closing ``` is no block; a completion without a
// block gives nullopt. Only Python whitespace is removed, so "\r\n" inside the code stays.
std::optional<std::string> extract_candidate(std::string_view completion, Which which = Which::First);
std::optional<std::string> extract_candidate(std::string_view completion, Which which,
                                             const std::vector<std::string>& language_tags);

}  // namespace dicebench::kernelbench
