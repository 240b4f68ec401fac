// Totals over a run's generation statistics (tokens, answers from a request cache, failed
// requests) for the run summary, read from the keys of dicebench/generation_stats.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace dicebench::host {

struct GenerationTotals {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t generated_tokens = 0;  // completion tokens of samples generated now (not from a cache)
  size_t with_tokens = 0;        // samples that reported token counts
  size_t cached = 0;
  size_t failed = 0;

  // Adds one sample's gen_stats JSON (anything unreadable adds nothing).
  void add(std::string_view stats_json);
  // "  tokens: ..." lines for the summary, or "" when no sample reported any of these; tokens per
  // second are the generated completion tokens over `seconds` of generation.
  std::string summary(double seconds) const;
};

}  // namespace dicebench::host
