// Tests of the fast path's tokenizer: comments, literals, directives and CUDA's launch brackets.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "harness/fastpath/src/source_scanner.hpp"

using namespace dicebench::fastpath;

namespace {
std::vector<std::string> texts(const std::string& source) {
  auto tokens = scan_source(source);
  REQUIRE(tokens.ok());
  std::vector<std::string> out;
  for (const auto& t : tokens.value()) out.emplace_back(token_text(source, t));
  return out;
}
}  // namespace

TEST_CASE("comments vanish, their contents never become tokens") {
  auto t = texts("a /* b <<< { */ c // d >>> }\n e");
  CHECK(t == std::vector<std::string>{"a", "c", "e"});
}

TEST_CASE("string and character literals are single tokens, escapes included") {
  std::string source = R"(x = "a \" { <<< }" + 'c' + '\'' + u8"z" + L'w';)";
  auto t = texts(source);
  CHECK(t == std::vector<std::string>{"x", "=", R"("a \" { <<< }")", "+", "'c'", "+", R"('\'')", "+", "u8\"z\"", "+",
                                      "L'w'", ";"});
}

TEST_CASE("raw strings may hold quotes, parentheses and newlines") {
  std::string source = "s = R\"delim(a \")\" }\n{ <<<)delim\"; t";
  auto tokens = scan_source(source);
  REQUIRE(tokens.ok());
  REQUIRE(tokens->size() == 5);
  CHECK((*tokens)[2].kind == TokenKind::String);
  CHECK((*tokens)[4].line == 2);
}

TEST_CASE("a directive is one token to the end of its line, continuations included") {
  std::string source = "#define M(x) \\\n  f(x) { <<< \n int y;\n  #  include <cuda_runtime.h> // note\n";
  auto tokens = scan_source(source);
  REQUIRE(tokens.ok());
  REQUIRE(tokens->size() == 5);
  CHECK((*tokens)[0].kind == TokenKind::Preprocessor);
  CHECK((*tokens)[1].line == 3);
  CHECK((*tokens)[4].kind == TokenKind::Preprocessor);
  Directive d = parse_directive(token_text(source, (*tokens)[4]));
  CHECK(d.name == "include");
  CHECK(d.rest == "<cuda_runtime.h>");
  IncludeTarget target = parse_include(d.rest);
  CHECK(target.header == "cuda_runtime.h");
  CHECK(target.angled);
  CHECK(parse_directive(token_text(source, (*tokens)[0])).name == "define");
}

TEST_CASE("a # that does not start a line is not a directive") {
  auto tokens = scan_source("x # y\n");
  REQUIRE(tokens.ok());
  CHECK(tokens->size() == 3);
  CHECK((*tokens)[1].kind == TokenKind::Punct);
}

TEST_CASE("launch brackets and scope operators are single tokens") {
  auto t = texts("k<float><<<g, b>>>(x); a::b->c");
  CHECK(t == std::vector<std::string>{"k", "<", "float", ">", "<<<", "g", ",", "b", ">>>", "(", "x", ")", ";", "a",
                                      "::", "b", "->", "c"});
}

TEST_CASE("numbers with exponents, suffixes and digit separators") {
  auto t = texts("1.5e-3f 0x1p+4 1'000'000ull .5");
  CHECK(t == std::vector<std::string>{"1.5e-3f", "0x1p+4", "1'000'000ull", ".5"});
}

TEST_CASE("unterminated comments and strings are errors that name the line") {
  auto a = scan_source("int x;\n/* open");
  REQUIRE_FALSE(a.ok());
  CHECK(a.error().message.find("line 2") != std::string::npos);
  auto b = scan_source("\"open\n\"");
  REQUIRE_FALSE(b.ok());
  CHECK(b.error().message.find("string") != std::string::npos);
}

TEST_CASE("an apostrophe inside #error or a header name does not open a literal") {
  auto tokens = scan_source("#error don't do that\nint x;");
  REQUIRE(tokens.ok());
  CHECK(tokens->size() == 4);
}
