// Tokenizer for the fast compile path (source_scanner.hpp).
#include "harness/fastpath/src/source_scanner.hpp"

#include <array>
#include <cctype>

namespace dicebench::fastpath {
namespace {

bool is_ident_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$' || static_cast<unsigned char>(c) >= 0x80;
}
bool is_ident_char(char c) { return is_ident_start(c) || std::isdigit(static_cast<unsigned char>(c)); }

class Scanner {
 public:
  explicit Scanner(std::string_view source) : src_(source) {}

  Result<std::vector<Token>> run() {
    bool at_line_start = true;
    while (pos_ < src_.size()) {
      char c = src_[pos_];
      if (c == '\n') {
        ++line_;
        ++pos_;
        at_line_start = true;
        continue;
      }
      if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
        ++pos_;
        continue;
      }
      if (c == '\\' && pos_ + 1 < src_.size() && (src_[pos_ + 1] == '\n' || src_[pos_ + 1] == '\r')) {
        // A stray line continuation outside a directive joins lines; it does not end one.
        pos_ += 1;
        if (src_[pos_] == '\r') ++pos_;
        if (pos_ < src_.size() && src_[pos_] == '\n') {
          ++pos_;
          ++line_;
        }
        continue;
      }
      if (c == '/' && peek(1) == '/') {
        skip_line_comment();
        continue;
      }
      if (c == '/' && peek(1) == '*') {
        if (!skip_block_comment()) return make_error(at("unterminated /* comment"));
        continue;
      }
      if (c == '#' && at_line_start) {
        if (!directive()) return make_error(error_);
        continue;
      }
      at_line_start = false;
      if (!token()) return make_error(error_);
    }
    return std::move(tokens_);
  }

 private:
  char peek(std::size_t ahead) const { return pos_ + ahead < src_.size() ? src_[pos_ + ahead] : '\0'; }

  std::string at(const std::string& what) const { return what + " (line " + std::to_string(line_) + ")"; }

  void skip_line_comment() {
    // A backslash at the end of a // comment continues the comment onto the next line.
    while (pos_ < src_.size() && src_[pos_] != '\n') {
      if (src_[pos_] == '\\' && peek(1) == '\n') {
        pos_ += 2;
        ++line_;
        continue;
      }
      ++pos_;
    }
  }

  bool skip_block_comment() {
    pos_ += 2;
    while (pos_ + 1 < src_.size()) {
      if (src_[pos_] == '*' && src_[pos_ + 1] == '/') {
        pos_ += 2;
        return true;
      }
      if (src_[pos_] == '\n') ++line_;
      ++pos_;
    }
    return false;
  }

  // A directive runs to the end of the line; comments inside it are skipped, a backslash-newline
  // continues it, and string or character literals inside it are skipped whole.
  bool directive() {
    std::size_t begin = pos_;
    int line = line_;
    while (pos_ < src_.size()) {
      char c = src_[pos_];
      if (c == '\n') break;
      if (c == '\\' && (peek(1) == '\n' || (peek(1) == '\r' && peek(2) == '\n'))) {
        pos_ += peek(1) == '\r' ? 3 : 2;
        ++line_;
        continue;
      }
      if (c == '/' && peek(1) == '/') {
        skip_line_comment();
        break;
      }
      if (c == '/' && peek(1) == '*') {
        if (!skip_block_comment()) {
          error_ = at("unterminated /* comment");
          return false;
        }
        continue;
      }
      if (c == '"' || c == '\'') {
        // In #include <...> a quote is an ordinary character; elsewhere a literal.
        if (!quoted(c, /*in_directive=*/true)) return false;
        continue;
      }
      ++pos_;
    }
    std::size_t end = pos_;
    while (end > begin && (src_[end - 1] == ' ' || src_[end - 1] == '\t' || src_[end - 1] == '\r')) --end;
    tokens_.push_back({TokenKind::Preprocessor, begin, end, line});
    return true;
  }

  // Skips a quoted literal starting at pos_ (the quote character). Newlines end it with an error,
  // except inside a directive where an unmatched apostrophe is tolerated (#error don't ...).
  bool quoted(char quote, bool in_directive) {
    std::size_t start = pos_;
    ++pos_;
    while (pos_ < src_.size()) {
      char c = src_[pos_];
      if (c == '\\') {
        if (peek(1) == '\n') ++line_;
        pos_ += 2;
        continue;
      }
      if (c == quote) {
        ++pos_;
        return true;
      }
      if (c == '\n') break;
      ++pos_;
    }
    if (in_directive) {
      pos_ = start + 1;
      return true;
    }
    error_ = at(quote == '"' ? "unterminated string literal" : "unterminated character literal");
    return false;
  }

  bool raw_string(std::size_t begin) {
    // pos_ is at the opening quote after R.
    std::size_t open = src_.find('(', pos_ + 1);
    if (open == std::string_view::npos || open - pos_ - 1 > 16) {
      error_ = at("malformed raw string literal");
      return false;
    }
    std::string closing = ")" + std::string(src_.substr(pos_ + 1, open - pos_ - 1)) + "\"";
    std::size_t close = src_.find(closing, open + 1);
    if (close == std::string_view::npos) {
      error_ = at("unterminated raw string literal");
      return false;
    }
    int line = line_;
    for (std::size_t i = pos_; i < close + closing.size(); ++i)
      if (src_[i] == '\n') ++line_;
    pos_ = close + closing.size();
    skip_ud_suffix();
    tokens_.push_back({TokenKind::String, begin, pos_, line});
    return true;
  }

  void skip_ud_suffix() {
    while (pos_ < src_.size() && is_ident_char(src_[pos_])) ++pos_;
  }

  bool token() {
    std::size_t begin = pos_;
    int line = line_;
    char c = src_[pos_];
    if (is_ident_start(c)) {
      while (pos_ < src_.size() && is_ident_char(src_[pos_])) ++pos_;
      std::string_view word = src_.substr(begin, pos_ - begin);
      // Encoding prefixes and raw strings: u8"..", L'..', R"(..)", u8R"x(..)x".
      if (pos_ < src_.size() && (src_[pos_] == '"' || src_[pos_] == '\'')) {
        static constexpr std::array<std::string_view, 5> plain{"u8", "u", "U", "L", ""};
        static constexpr std::array<std::string_view, 4> raw{"u8R", "uR", "UR", "LR"};
        bool is_raw = word == "R";
        for (auto r : raw) is_raw = is_raw || word == r;
        bool is_prefix = false;
        for (auto p : plain) is_prefix = is_prefix || (!p.empty() && word == p);
        if (is_raw && src_[pos_] == '"') return raw_string(begin);
        if (is_prefix) {
          char quote = src_[pos_];
          if (!quoted(quote, false)) return false;
          skip_ud_suffix();
          tokens_.push_back({quote == '"' ? TokenKind::String : TokenKind::Char, begin, pos_, line});
          return true;
        }
      }
      tokens_.push_back({TokenKind::Identifier, begin, pos_, line});
      return true;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        (c == '.' && std::isdigit(static_cast<unsigned char>(peek(1))))) {
      ++pos_;
      while (pos_ < src_.size()) {
        char d = src_[pos_];
        if ((d == '+' || d == '-') &&
            (src_[pos_ - 1] == 'e' || src_[pos_ - 1] == 'E' || src_[pos_ - 1] == 'p' || src_[pos_ - 1] == 'P')) {
          ++pos_;
          continue;
        }
        if (d == '\'' && pos_ + 1 < src_.size() && is_ident_char(src_[pos_ + 1])) {
          pos_ += 2;  // digit separator
          continue;
        }
        if (is_ident_char(d) || d == '.') {
          ++pos_;
          continue;
        }
        break;
      }
      tokens_.push_back({TokenKind::Number, begin, pos_, line});
      return true;
    }
    if (c == '"' || c == '\'') {
      if (!quoted(c, false)) return false;
      skip_ud_suffix();
      tokens_.push_back({c == '"' ? TokenKind::String : TokenKind::Char, begin, pos_, line});
      return true;
    }
    static constexpr std::array<std::string_view, 22> multi{"<<<", ">>>", "...", "<<=", ">>=", "->*", "::", "->",
                                                            "<<",  ">>",  "<=",  ">=",  "==",  "!=",  "&&", "||",
                                                            "++",  "--",  "+=",  "-=",  "*=",  "/="};
    for (auto m : multi) {
      if (src_.substr(pos_, m.size()) == m) {
        pos_ += m.size();
        tokens_.push_back({TokenKind::Punct, begin, pos_, line});
        return true;
      }
    }
    ++pos_;
    tokens_.push_back({TokenKind::Punct, begin, pos_, line});
    return true;
  }

  std::string_view src_;
  std::size_t pos_ = 0;
  int line_ = 1;
  std::vector<Token> tokens_;
  std::string error_;
};

std::string strip(std::string_view text) {
  std::size_t b = 0, e = text.size();
  while (b < e && std::isspace(static_cast<unsigned char>(text[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(text[e - 1]))) --e;
  return std::string(text.substr(b, e - b));
}

}  // namespace

Result<std::vector<Token>> scan_source(std::string_view source) { return Scanner(source).run(); }

Directive parse_directive(std::string_view text) {
  // Remove continuations and comments, then split "#  name rest".
  std::string clean;
  clean.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\\' && i + 1 < text.size() && (text[i + 1] == '\n' || text[i + 1] == '\r')) {
      i += (text[i + 1] == '\r' && i + 2 < text.size() && text[i + 2] == '\n') ? 2 : 1;
      clean += ' ';
      continue;
    }
    if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      std::size_t close = text.find("*/", i + 2);
      i = close == std::string_view::npos ? text.size() : close + 1;
      clean += ' ';
      continue;
    }
    if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') break;
    clean += c;
  }
  Directive d;
  std::size_t i = clean.find('#');
  if (i == std::string::npos) return d;
  ++i;
  while (i < clean.size() && (clean[i] == ' ' || clean[i] == '\t')) ++i;
  std::size_t name_begin = i;
  while (i < clean.size() && is_ident_char(clean[i])) ++i;
  d.name = clean.substr(name_begin, i - name_begin);
  d.rest = strip(std::string_view(clean).substr(i));
  return d;
}

IncludeTarget parse_include(std::string_view rest) {
  IncludeTarget target;
  if (rest.size() >= 2 && rest.front() == '<') {
    std::size_t close = rest.find('>');
    if (close != std::string_view::npos) {
      target.header = strip(rest.substr(1, close - 1));
      target.angled = true;
    }
  } else if (rest.size() >= 2 && rest.front() == '"') {
    std::size_t close = rest.find('"', 1);
    if (close != std::string_view::npos) target.header = strip(rest.substr(1, close - 1));
  }
  return target;
}

}  // namespace dicebench::fastpath
