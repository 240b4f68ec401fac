// The keys of a sample's extraction details (samples.extraction_details, the JSON object a suite's
// optional_extract_problem sends to its details sink) that the host reads back for `report` and
// `show`. One definition for plugins and host; any other key is the suite's own.
#pragma once

#include <string_view>

namespace dicebench::extraction {

// Kernel infilling: the answer's middle equals the reference middle (both without the whitespace at
// their ends): true or false.
inline constexpr std::string_view kInfillExactMatch = "infill_exact_match";
// Kernel infilling: Levenshtein distance in bytes from the answer's middle to the reference middle
// (the reference middle's length when the answer holds no middle): an integer.
inline constexpr std::string_view kInfillEditDistance = "infill_edit_distance";

}  // namespace dicebench::extraction
