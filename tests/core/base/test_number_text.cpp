// Numbers and sizes read from text (core/base/number_text.hpp): the whole text, finite, in range;
// anything else none, never the nearest number nor an exception.
#include "core/base/number_text.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <limits>

using namespace dicebench;

TEST_CASE("a whole number is the whole text, in range, with a sign only where the type has one") {
  CHECK(parse_number<int>("42") == 42);
  CHECK(parse_number<int>("-3") == -3);
  CHECK(parse_number<int64_t>("9223372036854775807") == INT64_MAX);
  for (const char* bad : {"", " 1", "1 ", "+1", "1.5", "0x10", "12abc", "99999999999999999999"})
    CHECK_MESSAGE(!parse_number<int64_t>(bad), bad);
  CHECK_FALSE(parse_number<uint64_t>("-5"));  // not 18446744073709551611
  CHECK_FALSE(parse_number<int>("0", 1, 10));
  CHECK_FALSE(parse_number<int>("11", 1, 10));
  CHECK(parse_number<int>("10", 1, 10) == 10);
}

TEST_CASE("a real number is finite and in range") {
  CHECK(parse_number<double>("0.25") == 0.25);
  CHECK(parse_number<double>("1e-3") == 1e-3);
  for (const char* bad : {"nan", "inf", "-inf", "1e999", "", "1,5", "0.5s"})
    CHECK_MESSAGE(!parse_number<double>(bad), bad);
  CHECK_FALSE(parse_number<double>("2.5", 0.0, 2.0));
}

TEST_CASE("a size is a whole number with an optional binary unit, and none beyond 2^64 - 1 bytes") {
  CHECK(parse_size("512") == 512u);
  CHECK(parse_size("4GiB") == (uint64_t{4} << 30));
  CHECK(parse_size("4gb") == (uint64_t{4} << 30));
  CHECK(parse_size("16K") == 16u * 1024);
  CHECK(parse_size("1T") == (uint64_t{1} << 40));
  for (const char* bad : {"", "GiB", "4 GiB", "4PiB", "-1G", "1.5G", "99999999999999999999", "16777216T"})
    CHECK_MESSAGE(!parse_size(bad), bad);
  CHECK(parse_size("16777215T") == (uint64_t{16777215} << 40));
}
