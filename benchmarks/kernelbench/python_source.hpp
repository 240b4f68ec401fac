// A candidate's Python source read as logical lines of tokens, with the names its imports and
// simple assignments bind resolved to the modules they come from: enough to see what a program
// defines, decorates and calls without running it (comments and line continuations handled,
// string literals kept as strings, never read as code).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace dicebench::kernelbench {

struct PyToken {
  enum class Kind { name, number, string, op };
  Kind kind;
  std::string text;  // a string's body without prefix and quotes (escapes left as written)
};

// One logical line: physical lines joined inside brackets and after a backslash.
struct PyLine {
  int indent = 0;  // columns before the first token (a tab advances to the next multiple of 8)
  std::vector<PyToken> tokens;
};

// Never fails: text that is not Python still yields lines (an unterminated string runs to the end).
std::vector<PyLine> python_lines(std::string_view source);

// A dotted name starting at tokens[at] ("a.b.c"), and how many tokens it spans (0 if tokens[at]
// is not a name).
std::pair<std::string, size_t> dotted_name(const std::vector<PyToken>& tokens, size_t at);

// What the module's names stand for: `import a.b as c` binds c to "a.b", `import a.b` binds a,
// `from a.b import c as d` binds d to "a.b.c", `x = a.b` binds x to what a.b resolves to.
class PyNames {
 public:
  explicit PyNames(const std::vector<PyLine>& lines);
  // The qualified names a dotted name may refer to: its first part replaced by what it is bound to
  // (unchanged when unbound, e.g. a local variable); an unbound name may also come from any module
  // star-imported ("from m import *": m.name), which cannot be told without importing m.
  std::vector<std::string> meanings(std::string_view dotted) const;
  // Whether some import brings in `module` or a module inside it.
  bool imports(std::string_view module) const;

 private:
  std::map<std::string, std::string, std::less<>> bound_;
  std::vector<std::string> star_modules_;  // `from M import *`
  std::vector<std::string> imported_;
};

}  // namespace dicebench::kernelbench
