// Python source as logical lines of tokens, and the names its imports bind (python_source.hpp).
#include "benchmarks/kernelbench/python_source.hpp"

#include <cctype>

namespace dicebench::kernelbench {
namespace {

bool is_name_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || static_cast<unsigned char>(c) >= 0x80;
}
bool is_name_char(char c) { return is_name_start(c) || std::isdigit(static_cast<unsigned char>(c)); }

// Whether `prefix` (the letters before a quote) is a string prefix: r, b, u, f, t and their pairs.
bool is_string_prefix(std::string_view prefix) {
  if (prefix.size() > 2) return false;
  for (char c : prefix)
    if (std::string_view("rRbBuUfFtT").find(c) == std::string_view::npos) return false;
  return true;
}

class Lexer {
 public:
  explicit Lexer(std::string_view source) : src_(source) {}

  std::vector<PyLine> run() {
    while (pos_ < src_.size()) {
      const char c = src_[pos_];
      if (c == '\n' || c == '\r') {
        ++pos_;
        if (depth_ == 0) end_line();
        column_ = 0;
        at_line_start_ = depth_ == 0 && line_.tokens.empty();
        continue;
      }
      if (c == ' ' || c == '\t' || c == '\f') {
        if (at_line_start_) column_ = c == '\t' ? (column_ / 8 + 1) * 8 : column_ + 1;
        ++pos_;
        continue;
      }
      if (c == '\\' && pos_ + 1 < src_.size() && (src_[pos_ + 1] == '\n' || src_[pos_ + 1] == '\r')) {
        pos_ += src_[pos_ + 1] == '\r' && pos_ + 2 < src_.size() && src_[pos_ + 2] == '\n' ? 3 : 2;  // joins lines
        continue;
      }
      if (c == '#') {
        while (pos_ < src_.size() && src_[pos_] != '\n' && src_[pos_] != '\r') ++pos_;
        continue;
      }
      if (line_.tokens.empty()) line_.indent = column_;
      at_line_start_ = false;
      if (is_name_start(c)) {
        const size_t start = pos_;
        while (pos_ < src_.size() && is_name_char(src_[pos_])) ++pos_;
        const std::string_view word = src_.substr(start, pos_ - start);
        if (pos_ < src_.size() && (src_[pos_] == '\'' || src_[pos_] == '"') && is_string_prefix(word)) {
          read_string();
        } else {
          line_.tokens.push_back({PyToken::Kind::name, std::string(word)});
        }
        continue;
      }
      if (c == '\'' || c == '"') {
        read_string();
        continue;
      }
      if (std::isdigit(static_cast<unsigned char>(c)) ||
          (c == '.' && pos_ + 1 < src_.size() && std::isdigit(static_cast<unsigned char>(src_[pos_ + 1])))) {
        const size_t start = pos_;
        while (pos_ < src_.size() && (is_name_char(src_[pos_]) || src_[pos_] == '.')) ++pos_;
        line_.tokens.push_back({PyToken::Kind::number, std::string(src_.substr(start, pos_ - start))});
        continue;
      }
      if (c == '(' || c == '[' || c == '{') ++depth_;
      if ((c == ')' || c == ']' || c == '}') && depth_ > 0) --depth_;
      line_.tokens.push_back({PyToken::Kind::op, std::string(1, c)});
      ++pos_;
    }
    end_line();
    return std::move(lines_);
  }

 private:
  // At an opening quote: one string token, its body as written (escapes skip the next byte).
  void read_string() {
    const char quote = src_[pos_];
    const bool triple = src_.substr(pos_, 3) == std::string(3, quote);
    pos_ += triple ? 3 : 1;
    std::string body;
    while (pos_ < src_.size()) {
      const char c = src_[pos_];
      if (c == '\\' && pos_ + 1 < src_.size()) {
        body += src_.substr(pos_, 2);
        pos_ += 2;
        continue;
      }
      if (c == quote && (!triple || src_.substr(pos_, 3) == std::string(3, quote))) {
        pos_ += triple ? 3 : 1;
        break;
      }
      if (!triple && (c == '\n' || c == '\r')) break;  // unterminated: Python's error, not ours
      body += c;
      ++pos_;
    }
    line_.tokens.push_back({PyToken::Kind::string, std::move(body)});
  }

  void end_line() {
    if (!line_.tokens.empty()) lines_.push_back(std::move(line_));
    line_ = {};
    depth_ = 0;
  }

  std::string_view src_;
  size_t pos_ = 0;
  int depth_ = 0;
  int column_ = 0;
  bool at_line_start_ = true;
  PyLine line_;
  std::vector<PyLine> lines_;
};

bool is_op(const PyToken& token, char op) {
  return token.kind == PyToken::Kind::op && token.text.size() == 1 && token.text[0] == op;
}
bool is_word(const PyToken& token, std::string_view word) {
  return token.kind == PyToken::Kind::name && token.text == word;
}

}  // namespace

std::vector<PyLine> python_lines(std::string_view source) { return Lexer(source).run(); }

std::pair<std::string, size_t> dotted_name(const std::vector<PyToken>& tokens, size_t at) {
  if (at >= tokens.size() || tokens[at].kind != PyToken::Kind::name) return {"", 0};
  std::string name = tokens[at].text;
  size_t end = at + 1;
  while (end + 1 < tokens.size() && is_op(tokens[end], '.') && tokens[end + 1].kind == PyToken::Kind::name) {
    name += "." + tokens[end + 1].text;
    end += 2;
  }
  return {name, end - at};
}

PyNames::PyNames(const std::vector<PyLine>& lines) {
  for (const auto& line : lines) {
    const auto& t = line.tokens;
    // Statements after ';' on one line are rare in candidates; the first statement is read.
    if (is_word(t[0], "import")) {
      // import a.b [as c], d
      for (size_t i = 1; i < t.size();) {
        const auto [module, span] = dotted_name(t, i);
        if (span == 0) break;
        imported_.push_back(module);
        i += span;
        if (i + 1 < t.size() && is_word(t[i], "as") && t[i + 1].kind == PyToken::Kind::name) {
          bound_[t[i + 1].text] = module;
          i += 2;
        } else {
          const std::string first = module.substr(0, module.find('.'));
          bound_[first] = first;
        }
        if (i < t.size() && is_op(t[i], ','))
          ++i;
        else
          break;
      }
    } else if (is_word(t[0], "from")) {
      // from a.b import c [as d], e   |   from a.b import (c, d)   |   from a.b import *
      const auto [module, span] = dotted_name(t, 1);
      if (span == 0 || 1 + span >= t.size() || !is_word(t[1 + span], "import")) continue;
      imported_.push_back(module);
      for (size_t i = 2 + span; i < t.size(); ++i) {
        if (is_op(t[i], '*')) star_modules_.push_back(module);
        if (t[i].kind != PyToken::Kind::name) continue;
        const std::string& name = t[i].text;
        if (i + 2 < t.size() && is_word(t[i + 1], "as") && t[i + 2].kind == PyToken::Kind::name) {
          bound_[t[i + 2].text] = module + "." + name;
          i += 2;
        } else {
          bound_[name] = module + "." + name;
        }
      }
    } else if (t.size() >= 3 && t[0].kind == PyToken::Kind::name && is_op(t[1], '=')) {
      // x = a.b (a plain alias; anything more is an ordinary value)
      const auto [value, span] = dotted_name(t, 2);
      if (span > 0 && 2 + span == t.size()) bound_[t[0].text] = meanings(value).front();
    }
  }
}

std::vector<std::string> PyNames::meanings(std::string_view dotted) const {
  const size_t dot = dotted.find('.');
  const std::string_view first = dotted.substr(0, dot);
  const std::string_view rest = dot == std::string_view::npos ? std::string_view() : dotted.substr(dot);
  if (const auto it = bound_.find(first); it != bound_.end()) return {it->second + std::string(rest)};
  std::vector<std::string> all{std::string(dotted)};
  for (const auto& module : star_modules_) all.push_back(module + "." + std::string(dotted));
  return all;
}

bool PyNames::imports(std::string_view module) const {
  for (const auto& m : imported_)
    if (m == module || (m.size() > module.size() && m.starts_with(module) && m[module.size()] == '.')) return true;
  return false;
}

}  // namespace dicebench::kernelbench
