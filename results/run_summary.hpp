// The text of `dicebench show RUN`: a run's record, its configuration and a compact table of
// its problems with sample and verdict counts.
#pragma once

#include <cstdint>
#include <string>

#include "core/base/result.hpp"

namespace dicebench::results {

class Store;

Result<std::string> format_run_summary(Store& store, std::int64_t run);

}  // namespace dicebench::results
