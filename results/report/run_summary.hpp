// The text of `dicebench show RUN`: a run's record, its configuration, a compact table of its
// problems with sample and verdict counts and degenerate traits, and one row per sample with its
// verdict (BORDERLINE marked), margin, speedup and flags with their details.
#pragma once

#include <cstdint>
#include <string>

#include "core/base/result.hpp"

namespace dicebench::results {

class Store;

Result<std::string> format_run_summary(Store& store, std::int64_t run);

}  // namespace dicebench::results
