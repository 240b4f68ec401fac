// The keys of a sample's generation statistics (samples.gen_stats, the stats_json a model plugin
// returns) that the host reads back: run totals (tokens, tokens per second, answers from a request
// cache, failed requests). One definition for plugins and host; any other key is the plugin's own.
#pragma once

#include <string_view>

namespace dicebench::stats {

inline constexpr std::string_view kPromptTokens = "prompt_tokens";          // integer
inline constexpr std::string_view kCompletionTokens = "completion_tokens";  // integer
inline constexpr std::string_view kFinishReason = "finish_reason";          // "stop", "length", ...
inline constexpr std::string_view kLatencySeconds = "latency_s";            // seconds the answer took to arrive
inline constexpr std::string_view kCached = "cached";  // true: the answer came from a request cache
inline constexpr std::string_view kError = "error";    // why no completion came (the sample failed)

}  // namespace dicebench::stats
