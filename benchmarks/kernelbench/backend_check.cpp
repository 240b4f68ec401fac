// Whether a candidate's source uses the kernel language it was asked for (backend_check.hpp).
#include "benchmarks/kernelbench/backend_check.hpp"

#include "benchmarks/kernelbench/python_source.hpp"

#include <set>
#include <vector>

namespace dicebench::kernelbench {
namespace {

bool is_op(const PyToken& token, char op) {
  return token.kind == PyToken::Kind::op && token.text.size() == 1 && token.text[0] == op;
}
bool is_word(const PyToken& token, std::string_view word) {
  return token.kind == PyToken::Kind::name && token.text == word;
}

// Whether a dotted name, read through the candidate's imports, may be one of `names`.
bool means_one_of(const PyNames& names, std::string_view dotted, const QualifiedNames& listed) {
  for (const auto& meaning : names.meanings(dotted))
    for (const auto n : listed)
      if (!n.empty() && n == meaning) return true;
  return false;
}

// ... or a name under one of the `prefixes`.
bool means_under(const PyNames& names, std::string_view dotted, const QualifiedNames& prefixes) {
  for (const auto& meaning : names.meanings(dotted))
    for (const auto p : prefixes)
      if (!p.empty() && meaning.starts_with(p)) return true;
  return false;
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

// A span of the source's code: tokens [first_token, end) of line `line`, then every following line
// indented deeper than `indent`.
struct Body {
  size_t line = 0;
  size_t first_token = 0;
  int indent = 0;
};

// Where function `name`'s body lies, if a `def name` exists.
std::optional<Body> body_of(const std::vector<PyLine>& lines, std::string_view name) {
  for (size_t i = 0; i < lines.size(); ++i) {
    const auto& t = lines[i].tokens;
    const size_t at = is_word(t[0], "async") ? 1 : 0;
    if (at + 1 < t.size() && is_word(t[at], "def") && is_word(t[at + 1], name)) {
      // The header ends at the first ':' outside the parameter list.
      int depth = 0;
      size_t colon = t.size();
      for (size_t k = at + 2; k < t.size(); ++k) {
        if (is_op(t[k], '(') || is_op(t[k], '[') || is_op(t[k], '{')) ++depth;
        if (is_op(t[k], ')') || is_op(t[k], ']') || is_op(t[k], '}')) --depth;
        if (depth == 0 && is_op(t[k], ':')) {
          colon = k;
          break;
        }
      }
      return Body{i, colon + 1, lines[i].indent};
    }
  }
  return std::nullopt;
}

template <class Visit>
void for_each_body_line(const std::vector<PyLine>& lines, const Body& body, Visit visit) {
  visit(body.line, body.first_token);
  for (size_t i = body.line + 1; i < lines.size() && lines[i].indent > body.indent; ++i) visit(i, 0);
}

struct Kernel {
  std::string name;
  Body body;
  size_t defined_at = 0;  // the line that makes it a kernel (its def, or `k = decorator(f)`)
};

// The decorator a line applies to the next def (`@a.b` or `@a.b(...)`), as written.
std::optional<std::string> decorator_of(const PyLine& line) {
  if (!is_op(line.tokens[0], '@')) return std::nullopt;
  return dotted_name(line.tokens, 1).first;
}

// `k = decorator(f)` or `k = decorator(...)(f)`: the name k and the function f, when decorator is
// one of `decorators`.
std::optional<std::pair<std::string, std::string>> decorated_by_call(const PyLine& line, const PyNames& names,
                                                                     const QualifiedNames& decorators) {
  const auto& t = line.tokens;
  if (t.size() < 6 || t[0].kind != PyToken::Kind::name || !is_op(t[1], '=')) return std::nullopt;
  const auto [dotted, span] = dotted_name(t, 2);
  if (span == 0 || !means_one_of(names, dotted, decorators)) return std::nullopt;
  size_t p = 2 + span;
  const auto single_argument = [&](size_t at) -> std::optional<std::string> {
    if (at + 2 < t.size() && is_op(t[at], '(') && t[at + 1].kind == PyToken::Kind::name && is_op(t[at + 2], ')'))
      return t[at + 1].text;
    return std::nullopt;
  };
  if (auto f = single_argument(p)) return std::make_pair(t[0].text, *f);
  if (p >= t.size() || !is_op(t[p], '(')) return std::nullopt;
  for (int depth = 0; p < t.size(); ++p) {  // skip the decorator's own arguments
    if (is_op(t[p], '(')) ++depth;
    if (is_op(t[p], ')') && --depth == 0) break;
  }
  if (auto f = single_argument(p + 1)) return std::make_pair(t[0].text, *f);
  return std::nullopt;
}

std::vector<Kernel> find_kernels(const std::vector<PyLine>& lines, const PyNames& names,
                                 const QualifiedNames& decorators) {
  std::vector<Kernel> kernels;
  bool decorated = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    const auto& t = lines[i].tokens;
    if (const auto decorator = decorator_of(lines[i])) {
      decorated = decorated || means_one_of(names, *decorator, decorators);
      continue;
    }
    const size_t at = is_word(t[0], "async") ? 1 : 0;
    if (decorated && at + 1 < t.size() && is_word(t[at], "def") && t[at + 1].kind == PyToken::Kind::name)
      if (auto body = body_of(lines, t[at + 1].text); body && body->line == i)
        kernels.push_back({t[at + 1].text, *body, i});
    decorated = false;
    if (const auto by_call = decorated_by_call(lines[i], names, decorators))
      if (auto body = body_of(lines, by_call->second)) kernels.push_back({by_call->first, *body, i});
  }
  return kernels;
}

// Whether a kernel's body uses one of `uses` (prefixes of resolved names).
bool does_device_work(const std::vector<PyLine>& lines, const Kernel& kernel, const PyNames& names,
                      const QualifiedNames& uses) {
  bool found = false;
  for_each_body_line(lines, kernel.body, [&](size_t line, size_t from) {
    const auto& t = lines[line].tokens;
    for (size_t k = from; k < t.size() && !found; ++k) {
      if (k > 0 && is_op(t[k - 1], '.')) continue;  // inside a dotted name already read
      const auto [dotted, span] = dotted_name(t, k);
      if (span > 0 && means_under(names, dotted, uses)) found = true;
    }
  });
  return found;
}

// Whether a dotted reference is one of `names` or an attribute of one ("k", "k.run" for k): a set
// lookup per prefix, so the cost does not grow with the number of names.
bool refers_to(std::string_view dotted, const std::set<std::string, std::less<>>& names) {
  for (size_t end = dotted.find('.');; end = dotted.find('.', end + 1)) {
    if (names.contains(dotted.substr(0, end))) return true;
    if (end == std::string_view::npos) return false;
  }
}

// Renamings followed from a kernel's name (k -> self.k -> self.spare -> ...): honest code renames a
// kernel once or twice; a bound keeps a candidate's source from making the host's review quadratic.
constexpr int kMaxRenamingRounds = 8;

// Whether some kernel is used outside kernel code and the lines that define kernels: launched
// (k[grid](...), k(...).launch(...)), returned, or handed to a call. Storing it under another name
// (self.k = k) only adds that name; a kernel that is only ever stored is not launched.
bool any_launched(const std::vector<PyLine>& lines, const std::vector<Kernel>& kernels) {
  std::set<std::string, std::less<>> names;
  std::vector<bool> skip(lines.size(), false);
  for (const auto& kernel : kernels) {
    names.insert(kernel.name);
    skip[kernel.defined_at] = true;
    for_each_body_line(lines, kernel.body, [&](size_t line, size_t) { skip[line] = true; });
  }
  for (size_t i = 0; i < lines.size(); ++i) skip[i] = skip[i] || is_op(lines[i].tokens[0], '@');
  // `target = value` with both dotted names: what a kernel's new name is.
  const auto stored = [&](const PyLine& line) -> std::optional<std::pair<std::string, std::string>> {
    const auto& t = line.tokens;
    const auto [target, target_span] = dotted_name(t, 0);
    if (target_span == 0 || target_span + 1 >= t.size() || !is_op(t[target_span], '=')) return std::nullopt;
    const auto [value, value_span] = dotted_name(t, target_span + 1);
    if (value_span == 0 || target_span + 1 + value_span != t.size()) return std::nullopt;
    return std::make_pair(target, value);
  };
  for (int round = 0, grew = 1; grew && round < kMaxRenamingRounds; ++round) {  // the names a kernel is stored under
    grew = 0;
    for (size_t i = 0; i < lines.size(); ++i)
      if (const auto alias = skip[i] ? std::nullopt : stored(lines[i]); alias && refers_to(alias->second, names))
        grew = names.insert(alias->first).second || grew;
  }
  for (size_t i = 0; i < lines.size(); ++i) {
    if (skip[i] || stored(lines[i])) continue;
    const auto& t = lines[i].tokens;
    for (size_t k = 0; k < t.size(); ++k) {
      if (k > 0 && is_op(t[k - 1], '.')) continue;
      const auto [dotted, span] = dotted_name(t, k);
      if (span > 0 && refers_to(dotted, names)) return true;
    }
  }
  return false;
}

// What builds a CUDA candidate's kernels.
constexpr QualifiedNames kExtensionBuilders = {"torch.utils.cpp_extension.load_inline",
                                               "torch.utils.cpp_extension.load"};

std::optional<std::string> cuda_unused(std::string_view source) {
  const auto lines = python_lines(source);
  const PyNames names(lines);
  bool builds = false, kernel_source = false;
  for (const auto& line : lines) {
    const auto& t = line.tokens;
    for (size_t k = 0; k < t.size(); ++k) {
      if (t[k].kind == PyToken::Kind::string && t[k].text.find("__global__") != std::string::npos) kernel_source = true;
      if (k > 0 && is_op(t[k - 1], '.')) continue;
      const auto [dotted, span] = dotted_name(t, k);
      if (span == 0 || k + span >= t.size() || !is_op(t[k + span], '(')) continue;
      builds = builds || means_one_of(names, dotted, kExtensionBuilders);
    }
  }
  if (!builds) return "builds no CUDA extension (no call of torch.utils.cpp_extension.load_inline or load)";
  if (!kernel_source) return "no string in it holds a __global__ kernel";
  return std::nullopt;
}

}  // namespace

std::optional<std::string> backend_unused(const KernelBackend& backend, std::string_view source) {
  if (backend.name == "cuda") return cuda_unused(source);
  if (backend.kernel_decorators.front().empty()) return std::nullopt;  // a language this check does not read
  const auto lines = python_lines(source);
  const PyNames names(lines);
  const std::string language(backend.name);
  if (!names.imports(backend.python_module)) return "does not import " + std::string(backend.python_module);
  const auto kernels = find_kernels(lines, names, backend.kernel_decorators);
  if (kernels.empty())
    return "defines no " + language + " kernel (no function under @" + std::string(backend.kernel_decorators.front()) +
           ")";
  std::vector<std::string> all, working;
  for (const auto& kernel : kernels) {
    all.push_back(kernel.name);
    if (does_device_work(lines, kernel, names, backend.kernel_body_uses)) working.push_back(kernel.name);
  }
  if (working.empty())
    return "its " + language + " kernels (" + joined(all) + ") use none of " + std::string(backend.body_uses_said);
  if (!any_launched(lines, kernels))
    return "defines " + language + " kernels (" + joined(all) + ") but never launches one";
  return std::nullopt;
}

}  // namespace dicebench::kernelbench
