// A C++/CUDA tokenizer for the fast compile path: turns a source text into tokens (identifiers,
// numbers, string and character literals, punctuators, whole preprocessor directives) with their
// byte ranges, skipping comments and whitespace. It knows nothing of meaning; the splitter
// (source_splitter.hpp) reads the tokens. CUDA's launch brackets `<<<` and `>>>` are single tokens.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/result.hpp"

namespace dicebench::fastpath {

enum class TokenKind {
  Identifier,    // also keywords
  Number,        // a pp-number (digits, '.', exponents, suffixes, digit separators)
  String,        // "..." with any prefix (u8, L, u, U) and raw strings R"d(...)d"
  Char,          // '...' with any prefix
  Punct,         // punctuators; multi-character ones that matter here are single tokens
  Preprocessor,  // a whole directive line from '#' to the end, continuations included
};

struct Token {
  TokenKind kind;
  std::size_t begin;  // byte offset of the first character
  std::size_t end;    // byte offset one past the last character
  int line;           // 1-based line of the first character
};

// The tokens of `source`. Fails on an unterminated comment, string or character literal.
Result<std::vector<Token>> scan_source(std::string_view source);

// The text of a token.
inline std::string_view token_text(std::string_view source, const Token& token) {
  return source.substr(token.begin, token.end - token.begin);
}

// For a Preprocessor token: the directive name ("include", "define", "pragma", ... or "" for a
// null directive) and the rest of the line with comments and continuations removed.
struct Directive {
  std::string name;
  std::string rest;
};
Directive parse_directive(std::string_view directive_text);

// For an include directive's rest: the header name without its delimiters, and whether it was
// written <...> (true) or "..." (false). Empty name when the rest is neither form (a macro).
struct IncludeTarget {
  std::string header;
  bool angled = false;
};
IncludeTarget parse_include(std::string_view rest);

}  // namespace dicebench::fastpath
