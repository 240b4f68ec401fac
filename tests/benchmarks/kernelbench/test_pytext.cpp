// Unit tests: Python str.strip() / str.format() semantics used by prompt composition.
#include <doctest/doctest.h>

#include "benchmarks/kernelbench/pytext.hpp"

namespace kb = dicebench::kernelbench;

TEST_CASE("python_strip removes Python whitespace (ASCII and Unicode)") {
  CHECK(kb::python_strip(" \t\n\r\v\fx y\n ") == "x y");
  CHECK(kb::python_strip("\x1c\x1d\x1e\x1fx\x1f") == "x");
  CHECK(kb::python_strip("\xc2\xa0x\xe3\x80\x80") == "x");      // U+00A0, U+3000
  CHECK(kb::python_strip("\xe2\x80\x8bx") == "\xe2\x80\x8bx");  // U+200B is not a space
  CHECK(kb::python_strip("\xc3\xa9 ") == "\xc3\xa9");           // é stays
  CHECK(kb::python_strip("  ") == "");
  CHECK(kb::python_strip("\xff ") == "\xff");  // invalid UTF-8 is kept
}

TEST_CASE("python_format replaces {name} and un-doubles braces") {
  const kb::FormatContext context = {{"a", "A{b}"}, {"b", "B"}};
  auto out = kb::python_format("{a}-{{b}}-{b}-}}{{", context);
  REQUIRE(out.ok());
  CHECK(out.value() == "A{b}-{b}-B-}{");
}

TEST_CASE("python_format errors") {
  const kb::FormatContext context = {{"a", "1"}, {"b", "2"}};
  auto missing = kb::python_format("x {c} y", context);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message == "placeholder {c} has no value (known: a, b)");
  auto single_close = kb::python_format("ab}c", context);
  REQUIRE_FALSE(single_close.ok());
  CHECK(single_close.error().message == "single '}' at byte 2 (write '}}' for a literal brace)");
  auto single_open = kb::python_format("ab{a", context);
  REQUIRE_FALSE(single_open.ok());
  CHECK(single_open.error().message == "single '{' at byte 2 (write '{{' for a literal brace)");
  for (const char* field : {"{}", "{0}", "{a.x}", "{a[0]}", "{a!r}", "{a:>5}"}) {
    auto out = kb::python_format(field, context);
    REQUIRE_FALSE(out.ok());
    CHECK(out.error().message.rfind("unsupported replacement field " + std::string(field) + " at byte 0", 0) == 0);
  }
}

TEST_CASE("ascii case helpers") {
  CHECK(kb::ascii_upper("cuda") == "CUDA");
  CHECK(kb::ascii_capitalize("tileLANG") == "Tilelang");
  CHECK(kb::ascii_lower("One_Shot") == "one_shot");
}
