// From a model's answer to an infilling item to a candidate program and how close the answer came.
// A chat answer's middle is its first code block (KernelBench's extraction), and the candidate is
// prefix + middle + suffix with the whitespace at the middle's two ends taken from the reference
// middle (a code block cannot carry it); a span filled natively is the middle verbatim. Exact match
// and edit distance compare the middle with the reference middle, both without the whitespace at
// their ends.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "benchmarks/dice_infill/infill_items.hpp"

namespace dicebench::dice_infill {

struct InfillAnswer {
  std::optional<std::string> candidate;  // none: the answer holds no code block
  bool exact_match = false;
  // Levenshtein distance in bytes; without a code block, the reference middle's length (from nothing).
  std::int64_t edit_distance = 0;
};

// The middle from the completion's first code block.
InfillAnswer assemble_answer(const InfillItem& item, std::string_view completion);
// The middle as a model filled the span natively (every byte kept).
InfillAnswer assemble_span(const InfillItem& item, std::string_view span);

}  // namespace dicebench::dice_infill
