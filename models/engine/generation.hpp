// What a generation call takes (prompts, or infill rows) and returns for each row, and the call's
// counters.
#pragma once

#include <cstdint>
#include <vector>

namespace dicebench::engine {

using TokenRows = std::vector<std::vector<int64_t>>;  // one token-id sequence per prompt

// One span to fill: the tokens before it, the tokens after it, and how many tokens it may take.
struct InfillRow {
  std::vector<int64_t> before, after;
  int64_t span_tokens = 0;
};

struct Generation {
  std::vector<int64_t> tokens;  // the new tokens, without the stop token
  bool stopped = false;         // ended at a stop token (else at max_new_tokens, or the span's span_tokens)
};

struct GenerationStatistics {
  int64_t forward_passes = 0;    // model calls, prefill included
  int64_t prefilled_tokens = 0;  // tokens run through prefill passes: rows x columns, padding included
  int64_t generated_tokens = 0;  // summed over rows, as returned
};

}  // namespace dicebench::engine
