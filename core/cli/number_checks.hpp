// Checks of numeric options on the text as given: a number out of range is refused, not turned into
// the nearest one the option's type holds (CLI11's conversion stores 99999999999999999999 as
// 9223372036854775807 and -5 as 18446744073709551611), and the message names the range readably.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <limits>

namespace dicebench::cli {

// A whole number in [least, most] (signed options).
CLI::Validator whole_number(int64_t least, int64_t most = std::numeric_limits<int64_t>::max());
// A whole number in [0, most] (unsigned options: a seed).
CLI::Validator unsigned_number(uint64_t most = std::numeric_limits<uint64_t>::max());
// A finite number in [least, most].
CLI::Validator real_number(double least, double most);

}  // namespace dicebench::cli
