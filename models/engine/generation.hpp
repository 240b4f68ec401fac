// What a generation call returns for each prompt, and the call's counters.
#pragma once

#include <cstdint>
#include <vector>

namespace dicebench::engine {

using TokenRows = std::vector<std::vector<int64_t>>;  // one token-id sequence per prompt

struct Generation {
  std::vector<int64_t> tokens;  // the new tokens, without the stop token
  bool stopped = false;         // ended at a stop token (else at max_new_tokens)
};

struct GenerationStatistics {
  int64_t forward_passes = 0;    // model calls, prefill included
  int64_t generated_tokens = 0;  // summed over rows, as returned
};

}  // namespace dicebench::engine
