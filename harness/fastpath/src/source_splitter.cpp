// The splitter of the fast compile path (source_splitter.hpp): entities from tokens, then the
// device part and the host part as edits of the original text.
#include "harness/fastpath/src/source_splitter.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstddef>
#include <map>
#include <optional>
#include <set>

#include "harness/fastpath/src/source_scanner.hpp"

namespace dicebench::fastpath {
namespace {

constexpr std::size_t npos = static_cast<std::size_t>(-1);

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

// ------------------------------------------------------------------------------------------
// Headers

HeaderUse classify_header_impl(std::string_view h) {
  static const std::set<std::string_view> host_only{"vector",        "string",
                                                    "string_view",   "iostream",
                                                    "sstream",       "fstream",
                                                    "iomanip",       "ostream",
                                                    "istream",       "map",
                                                    "unordered_map", "set",
                                                    "unordered_set", "memory",
                                                    "functional",    "stdexcept",
                                                    "exception",     "chrono",
                                                    "thread",        "mutex",
                                                    "atomic",        "random",
                                                    "numeric",       "list",
                                                    "deque",         "queue",
                                                    "stack",         "bitset",
                                                    "regex",         "optional",
                                                    "variant",       "tuple",
                                                    "array",         "iterator",
                                                    "future",        "condition_variable",
                                                    "typeinfo",      "typeindex",
                                                    "any",           "filesystem",
                                                    "cstring",       "string.h",
                                                    "cstdlib",       "stdlib.h",
                                                    "ctime",         "time.h",
                                                    "unistd.h",      "omp.h",
                                                    "cuda.h",        "cudaTypedefs.h",
                                                    "cublas.h",      "cublas_v2.h",
                                                    "cublasLt.h",    "cublas_api.h",
                                                    "cublasXt.h",    "curand.h",
                                                    "cusparse.h",    "cusparseLt.h",
                                                    "cufft.h",       "cufftXt.h",
                                                    "cusolverDn.h",  "cusolver_common.h",
                                                    "nvrtc.h",       "cuda_profiler_api.h",
                                                    "nvToolsExt.h",  "nvtx3/nvToolsExt.h",
                                                    "dlfcn.h",       "pthread.h"};
  static const std::array<std::string_view, 9> host_only_prefixes{"torch/",  "ATen/", "c10/",  "pybind11/", "THC/",
                                                                  "caffe2/", "sys/",  "cudnn", "cusolver"};
  static const std::array<std::string_view, 10> device_only_prefixes{
      "cub/", "cooperative_groups", "cuda_pipeline",           "cuda_awbarrier", "curand_", "crt/",
      "sm_",  "device_functions",   "device_atomic_functions", "cuda/barrier"};
  // C++ standard headers for which device/ has a stub; any other one is a host header (NVRTC has
  // none of the standard library).
  static const std::set<std::string_view> device_stubs{"cmath",   "cfloat",      "climits", "cstdint",
                                                       "cstddef", "cassert",     "cstdio",  "algorithm",
                                                       "limits",  "type_traits", "utility"};
  if (host_only.count(h)) return HeaderUse::HostOnly;
  if (h.find('.') == std::string_view::npos && h.find('/') == std::string_view::npos && !device_stubs.count(h))
    return HeaderUse::HostOnly;
  for (auto p : host_only_prefixes)
    if (starts_with(h, p)) return HeaderUse::HostOnly;
  if (h == "mma.h" || h == "cuda/pipeline" || h == "cuda/annotated_ptr" || h == "cuda/ptx")
    return HeaderUse::DeviceOnly;
  for (auto p : device_only_prefixes)
    if (starts_with(h, p)) return HeaderUse::DeviceOnly;
  return HeaderUse::DeviceAndHost;
}

// ------------------------------------------------------------------------------------------
// Entities

enum class EntityKind { Directive, Empty, Label, Namespace, Linkage, Function, FunctionDecl, Class, Declaration };

struct Entity {
  EntityKind kind = EntityKind::Empty;
  std::size_t first = 0, last = 0;  // token indices, inclusive
  std::size_t body_open = npos, body_close = npos;
  std::size_t name_tok = npos;
  std::size_t params_open = npos;
  std::size_t after_template = npos;  // first token after the template heads (or `first`)
  bool is_global = false, is_device = false, is_host = false, is_constexpr = false;
  bool is_template = false, extern_c = false, explicit_instantiation = false;
  bool device_variable = false;  // __device__ / __constant__ / __shared__ / __managed__ variable
  bool has_eq = false;
  std::string ns_name;  // Namespace: the name ("" when anonymous)
  std::vector<Entity> children;
};

struct SplitError {
  std::string message;
};

class Splitter {
 public:
  Splitter(std::string_view src, std::vector<Token> tokens) : src_(src), tok_(std::move(tokens)) {}

  Result<SplitSource> run();

 private:
  // --- token helpers
  std::string_view text(std::size_t i) const { return token_text(src_, tok_[i]); }
  bool is(std::size_t i, std::string_view t) const {
    return i < tok_.size() && tok_[i].kind != TokenKind::Preprocessor && tok_[i].kind != TokenKind::String &&
           tok_[i].kind != TokenKind::Char && text(i) == t;
  }
  bool is_ident(std::size_t i) const { return i < tok_.size() && tok_[i].kind == TokenKind::Identifier; }
  int line(std::size_t i) const { return i < tok_.size() ? tok_[i].line : (tok_.empty() ? 1 : tok_.back().line); }
  [[noreturn]] void fail(std::size_t i, const std::string& what) const {
    throw SplitError{what + " (cuda_sources line " + std::to_string(line(i)) + ")"};
  }

  void match_brackets();
  std::size_t match_angle_forward(std::size_t open, std::size_t limit) const;
  std::size_t match_angle_backward(std::size_t close) const;

  std::vector<Entity> parse(std::size_t begin, std::size_t end, bool in_class);
  Entity parse_entity(std::size_t& i, std::size_t end, bool in_class);

  // --- classification
  bool mentions_host_only(std::size_t first, std::size_t last) const;
  void collect_kernels(const std::vector<Entity>& entities, std::vector<std::string>& ns);

  // --- edits
  struct Edit {
    std::size_t begin, end;
    std::string text;
  };
  void blank(std::vector<Edit>& edits, std::size_t first_tok, std::size_t last_tok);
  void blank_bytes(std::vector<Edit>& edits, std::size_t begin, std::size_t end);
  std::string apply(const std::vector<Edit>& edits) const;

  void device_edits(const std::vector<Entity>& entities, bool in_class);
  void host_edits(const std::vector<Entity>& entities, bool in_class);
  void rewrite_host_range(std::size_t begin, std::size_t end);
  std::size_t rewrite_launch(std::size_t at);
  std::size_t rewrite_reference(std::size_t at, std::size_t end);
  int slot_for(const std::string& name_expression);
  const KernelInfo* find_kernel(std::string_view name, std::size_t at) const;
  std::string joined(std::size_t first, std::size_t last) const;

  std::string_view src_;
  std::vector<Token> tok_;
  std::vector<std::size_t> match_;  // matching bracket for ( [ { and ) ] }
  std::vector<Edit> device_;
  std::vector<Edit> host_;
  SplitSource out_;
  std::map<std::string, int> slots_;
  std::set<std::size_t> kernel_decl_tokens_;  // name tokens of kernel definitions/declarations
  std::vector<bool> kernel_defined_;          // whether out_.kernels[i] has its definition yet
};

void Splitter::match_brackets() {
  match_.assign(tok_.size(), npos);
  std::vector<std::size_t> stack;
  for (std::size_t i = 0; i < tok_.size(); ++i) {
    if (tok_[i].kind != TokenKind::Punct) continue;
    std::string_view t = text(i);
    if (t == "(" || t == "[" || t == "{") {
      stack.push_back(i);
    } else if (t == ")" || t == "]" || t == "}") {
      char open = t == ")" ? '(' : t == "]" ? '[' : '{';
      if (stack.empty() || text(stack.back())[0] != open)
        fail(i, "unbalanced '" + std::string(t) + "' (brackets that differ between #if branches are not supported)");
      match_[i] = stack.back();
      match_[stack.back()] = i;
      stack.pop_back();
    }
  }
  if (!stack.empty()) fail(stack.back(), "unclosed '" + std::string(text(stack.back())) + "'");
}

// From a '<' at `open`, the matching '>' (counting nested angle brackets, skipping bracket groups).
std::size_t Splitter::match_angle_forward(std::size_t open, std::size_t limit) const {
  int depth = 0;
  for (std::size_t i = open; i < limit; ++i) {
    if (tok_[i].kind != TokenKind::Punct) continue;
    std::string_view t = text(i);
    if (t == "(" || t == "[" || t == "{") {
      i = match_[i];
      continue;
    }
    if (t == "<")
      ++depth;
    else if (t == "<<")
      depth += 2;
    else if (t == ">")
      --depth;
    else if (t == ">>")
      depth -= 2;
    else if (t == ">>>")
      depth -= 3;
    else if (t == ";" || t == "}" || t == ")")
      return npos;
    if (depth <= 0) return depth == 0 ? i : npos;
  }
  return npos;
}

// From a '>' at `close`, the matching '<' going backwards.
std::size_t Splitter::match_angle_backward(std::size_t close) const {
  int depth = 0;
  for (std::size_t i = close + 1; i-- > 0;) {
    if (tok_[i].kind != TokenKind::Punct) continue;
    std::string_view t = text(i);
    if (t == ")" || t == "]" || t == "}") {
      i = match_[i];
      continue;
    }
    if (t == ">")
      ++depth;
    else if (t == ">>")
      depth += 2;
    else if (t == "<")
      --depth;
    else if (t == "<<")
      depth -= 2;
    else if (t == ";" || t == "{" || t == "(")
      return npos;
    if (depth == 0) return i;
    if (depth < 0) return npos;
  }
  return npos;
}

std::vector<Entity> Splitter::parse(std::size_t begin, std::size_t end, bool in_class) {
  std::vector<Entity> out;
  std::size_t i = begin;
  while (i < end) out.push_back(parse_entity(i, end, in_class));
  return out;
}

Entity Splitter::parse_entity(std::size_t& i, std::size_t end, bool in_class) {
  Entity e;
  e.first = i;
  if (tok_[i].kind == TokenKind::Preprocessor) {
    e.kind = EntityKind::Directive;
    e.last = i++;
    return e;
  }
  if (is(i, ";")) {
    e.kind = EntityKind::Empty;
    e.last = i++;
    return e;
  }
  if (in_class && (is(i, "public") || is(i, "private") || is(i, "protected")) && is(i + 1, ":")) {
    e.kind = EntityKind::Label;
    e.last = i + 1;
    i += 2;
    return e;
  }
  std::size_t j = i;
  // Template heads (template <...> possibly repeated), or an explicit instantiation.
  while (is(j, "template")) {
    if (is(j + 1, "<")) {
      std::size_t close = match_angle_forward(j + 1, end);
      if (close == npos) fail(j, "cannot read the template head");
      e.is_template = true;
      j = close + 1;
    } else {
      e.explicit_instantiation = true;
      ++j;
    }
  }
  e.after_template = j;
  // namespace blocks
  std::size_t k = j;
  if (is(k, "inline")) ++k;
  if (is(k, "namespace")) {
    std::size_t n = k + 1;
    std::string name;
    while (n < end && !is(n, "{") && !is(n, "=") && !is(n, ";")) {
      name += std::string(text(n));
      ++n;
    }
    if (is(n, "{")) {
      e.kind = EntityKind::Namespace;
      e.ns_name = name;
      e.body_open = n;
      e.body_close = match_[n];
      e.children = parse(n + 1, e.body_close, false);
      e.last = e.body_close;
      i = e.last + 1;
      return e;
    }
  }
  if (is(k, "extern") && k + 1 < end && tok_[k + 1].kind == TokenKind::String && is(k + 2, "{")) {
    e.kind = EntityKind::Linkage;
    e.body_open = k + 2;
    e.body_close = match_[k + 2];
    e.children = parse(k + 3, e.body_close, false);
    e.last = e.body_close;
    i = e.last + 1;
    return e;
  }
  bool class_key = false, seen_params = false, init_list = false;
  static const std::set<std::string_view> not_names{"__launch_bounds__",
                                                    "__attribute__",
                                                    "__align__",
                                                    "alignas",
                                                    "__declspec",
                                                    "decltype",
                                                    "noexcept",
                                                    "throw",
                                                    "sizeof",
                                                    "alignof",
                                                    "__cluster_dims__",
                                                    "__maxnreg__",
                                                    "static_assert",
                                                    "__builtin_align__",
                                                    "requires"};
  for (; j < end; ++j) {
    const Token& t = tok_[j];
    if (t.kind == TokenKind::Preprocessor) continue;  // a directive inside a declaration
    std::string_view s = text(j);
    if (t.kind == TokenKind::String && j > 0 && is(j - 1, "extern") && s == "\"C\"") {
      e.extern_c = true;
      continue;
    }
    if (t.kind == TokenKind::Identifier) {
      if (s == "__global__")
        e.is_global = true;
      else if (s == "__device__")
        e.is_device = true;
      else if (s == "__host__")
        e.is_host = true;
      else if (s == "constexpr" || s == "consteval")
        e.is_constexpr = true;
      else if (s == "__constant__" || s == "__shared__" || s == "__managed__")
        e.device_variable = true;
      else if ((s == "struct" || s == "class" || s == "union" || s == "enum") && !seen_params && !e.has_eq)
        class_key = true;
      else if (s == "operator" && !seen_params && !e.has_eq) {
        // operator(), operator[], operator+ ...: the name runs to the parameter list.
        e.name_tok = j;
        std::size_t p = j + 1;
        if (is(p, "(") && is(p + 1, ")"))
          p += 2;
        else if (is(p, "[") && is(p + 1, "]"))
          p += 2;
        while (p < end && !is(p, "(")) ++p;
        if (p >= end) fail(j, "cannot read an operator declaration");
        e.params_open = p;
        seen_params = true;
        j = match_[p];
      }
      continue;
    }
    if (t.kind != TokenKind::Punct) continue;
    if (s == "(") {
      std::size_t close = match_[j];
      if (!seen_params && !e.has_eq && j > e.first && is_ident(j - 1) && !not_names.count(text(j - 1))) {
        e.params_open = j;
        e.name_tok = j - 1;
        seen_params = true;
      } else if (!seen_params && !e.has_eq && j > e.first && is(j - 1, ">")) {
        // A template-id before the parameters: an explicit specialization f<float>(...).
        std::size_t open = match_angle_backward(j - 1);
        if (open != npos && open > e.first && is_ident(open - 1) && !not_names.count(text(open - 1))) {
          e.params_open = j;
          e.name_tok = open - 1;
          seen_params = true;
        }
      }
      j = close;
      continue;
    }
    if (s == "[") {
      j = match_[j];
      continue;
    }
    if (s == "=") {
      e.has_eq = true;
      continue;
    }
    if (s == ":" && seen_params && !e.has_eq) {
      init_list = true;  // constructor member initializers follow
      continue;
    }
    if (s == "{") {
      std::size_t close = match_[j];
      if (init_list && j > 0 && (is_ident(j - 1) || is(j - 1, ">"))) {
        j = close;  // a brace-initialized member: b{2}
        continue;
      }
      if (e.has_eq || (!class_key && !seen_params)) {
        j = close;  // an initializer: int a[] = {1, 2}; Foo f{1};
        continue;
      }
      if (class_key && !seen_params) {
        e.kind = EntityKind::Class;
        e.body_open = j;
        e.body_close = close;
        e.children = parse(j + 1, close, true);
        // The declaration goes on to its ';' (struct S {...} s;).
        std::size_t p = close + 1;
        while (p < end && !is(p, ";")) {
          if (is(p, "(") || is(p, "[") || is(p, "{")) p = match_[p];
          ++p;
        }
        if (p >= end) fail(close, "a class definition without its closing ';'");
        e.last = p;
        i = p + 1;
        return e;
      }
      e.kind = EntityKind::Function;
      e.body_open = j;
      e.body_close = close;
      e.last = close;
      i = close + 1;
      return e;
    }
    if (s == ";") {
      e.kind = (seen_params && !e.has_eq) ? EntityKind::FunctionDecl : EntityKind::Declaration;
      // `= default` / `= delete` / `= 0` functions are declarations of functions.
      if (seen_params && e.has_eq) e.kind = EntityKind::FunctionDecl;
      e.last = j;
      i = j + 1;
      return e;
    }
    if (s == "}" || s == ")" || s == "]") fail(j, "unexpected '" + std::string(s) + "'");
  }
  // Runs to the end without ';' (a macro invocation at the end of the source, say).
  e.kind = EntityKind::Declaration;
  e.last = end - 1;
  i = end;
  return e;
}

bool Splitter::mentions_host_only(std::size_t first, std::size_t last) const {
  static const std::set<std::string_view> host_namespaces{"torch", "at", "c10", "pybind11", "py", "caffe2"};
  static const std::set<std::string_view> device_std{"min",
                                                     "max",
                                                     "abs",
                                                     "fabs",
                                                     "sqrt",
                                                     "exp",
                                                     "log",
                                                     "pow",
                                                     "numeric_limits",
                                                     "is_same",
                                                     "is_same_v",
                                                     "enable_if",
                                                     "enable_if_t",
                                                     "conditional",
                                                     "conditional_t",
                                                     "is_floating_point",
                                                     "is_floating_point_v",
                                                     "is_integral",
                                                     "is_integral_v",
                                                     "integral_constant",
                                                     "true_type",
                                                     "false_type",
                                                     "size_t",
                                                     "ptrdiff_t",
                                                     "int8_t",
                                                     "int16_t",
                                                     "int32_t",
                                                     "int64_t",
                                                     "uint8_t",
                                                     "uint16_t",
                                                     "uint32_t",
                                                     "uint64_t",
                                                     "swap",
                                                     "move",
                                                     "forward",
                                                     "remove_cv",
                                                     "remove_cv_t",
                                                     "decay",
                                                     "decay_t",
                                                     "remove_reference",
                                                     "remove_reference_t",
                                                     "is_signed",
                                                     "is_unsigned",
                                                     "tanh",
                                                     "sin",
                                                     "cos",
                                                     "floor",
                                                     "ceil",
                                                     "round",
                                                     "fmin",
                                                     "fmax",
                                                     "exp2",
                                                     "log2",
                                                     "erf",
                                                     "isnan",
                                                     "isinf",
                                                     "isfinite",
                                                     "nullptr_t"};
  for (std::size_t i = first; i <= last && i < tok_.size(); ++i) {
    if (tok_[i].kind != TokenKind::Identifier) continue;
    std::string_view s = text(i);
    if (host_namespaces.count(s) && is(i + 1, "::")) return true;
    if (s == "Tensor" || starts_with(s, "TORCH_") || starts_with(s, "AT_") || starts_with(s, "PYBIND11_") ||
        starts_with(s, "C10_") || starts_with(s, "cublas") || starts_with(s, "cudnn") || starts_with(s, "cusparse") ||
        starts_with(s, "cufft") || starts_with(s, "cusolver") || starts_with(s, "curandGenerator") ||
        starts_with(s, "curandCreate"))
      return true;
    if (s == "std" && is(i + 1, "::") && is_ident(i + 2) && !device_std.count(text(i + 2))) return true;
    if (s == "using" && is(i + 1, "namespace") && is_ident(i + 2) && host_namespaces.count(text(i + 2))) return true;
  }
  return false;
}

void Splitter::collect_kernels(const std::vector<Entity>& entities, std::vector<std::string>& ns) {
  for (const Entity& e : entities) {
    if (e.kind == EntityKind::Namespace) {
      bool named = !e.ns_name.empty();
      if (named) ns.push_back(e.ns_name);
      collect_kernels(e.children, ns);
      if (named) ns.pop_back();
      continue;
    }
    if (e.kind == EntityKind::Linkage) {
      collect_kernels(e.children, ns);
      continue;
    }
    if ((e.kind == EntityKind::Function || e.kind == EntityKind::FunctionDecl) && e.is_global &&
        !e.explicit_instantiation && e.name_tok != npos) {
      std::string name(text(e.name_tok));
      std::string qualified;
      for (const auto& n : ns) qualified += n + "::";
      qualified += name;
      kernel_decl_tokens_.insert(e.name_tok);
      // Declarations may come before the definition (with other parameter names); a second
      // definition of the same name is an overload, which a launch could not name.
      bool definition = e.kind == EntityKind::Function;
      bool known = false;
      for (std::size_t k = 0; k < out_.kernels.size(); ++k) {
        if (out_.kernels[k].qualified_name != qualified) continue;
        known = true;
        if (out_.kernels[k].is_template != e.is_template || (definition && kernel_defined_[k]))
          fail(e.name_tok, "kernel " + qualified + " is overloaded (more than one kernel of that name)");
        if (definition) kernel_defined_[k] = true;
      }
      if (!known) {
        out_.kernels.push_back({name, qualified, e.is_template, e.extern_c, line(e.name_tok)});
        kernel_defined_.push_back(definition);
      }
    }
  }
}

void Splitter::blank_bytes(std::vector<Edit>& edits, std::size_t begin, std::size_t end) {
  std::string text;
  for (std::size_t b = begin; b < end; ++b) text += src_[b] == '\n' ? '\n' : ' ';
  edits.push_back({begin, end, std::move(text)});
}

void Splitter::blank(std::vector<Edit>& edits, std::size_t first_tok, std::size_t last_tok) {
  blank_bytes(edits, tok_[first_tok].begin, tok_[last_tok].end);
}

std::string Splitter::apply(const std::vector<Edit>& input) const {
  std::vector<Edit> edits = input;
  std::stable_sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) { return a.begin < b.begin; });
  std::string out;
  out.reserve(src_.size() + 256);
  std::size_t pos = 0;
  for (const Edit& e : edits) {
    if (e.begin < pos) continue;  // overlapped by an earlier edit (a blanked outer entity)
    out.append(src_.substr(pos, e.begin - pos));
    out += e.text;
    pos = e.end;
  }
  out.append(src_.substr(pos));
  return out;
}

void Splitter::device_edits(const std::vector<Entity>& entities, bool in_class) {
  for (const Entity& e : entities) {
    switch (e.kind) {
      case EntityKind::Directive: {
        Directive d = parse_directive(text(e.first));
        if (d.name == "include") {
          IncludeTarget target = parse_include(d.rest);
          if (!target.header.empty() && classify_header(target.header) == HeaderUse::HostOnly)
            blank(device_, e.first, e.last);
          else if (!target.header.empty())
            out_.device_includes.push_back(target.header);
        } else if (d.name == "pragma" && starts_with(d.rest, "once")) {
          blank(device_, e.first, e.last);
        }
        break;
      }
      case EntityKind::Namespace:
      case EntityKind::Linkage:
        if (e.kind == EntityKind::Namespace &&
            (e.ns_name == "torch" || e.ns_name == "at" || e.ns_name == "c10" || e.ns_name == "pybind11"))
          blank(device_, e.first, e.last);
        else
          device_edits(e.children, false);
        break;
      case EntityKind::Function:
      case EntityKind::FunctionDecl: {
        bool device_side = e.is_global || e.is_device;
        if (!device_side && e.is_constexpr && !e.is_host && !mentions_host_only(e.first, e.last)) {
          // What nvcc's --expt-relaxed-constexpr allows: device code may call constexpr host functions.
          device_.push_back({tok_[e.after_template].begin, tok_[e.after_template].begin, "__host__ __device__ "});
          device_side = true;
        }
        if (e.kind == EntityKind::FunctionDecl && e.has_eq && in_class) break;  // = default / = delete
        if (!device_side)
          blank(device_, e.first, e.last);
        else if (e.body_open != npos && e.is_global) {
          // A launch inside device code needs relocatable device code and cudadevrt.
          for (std::size_t i = e.body_open; i < e.body_close; ++i)
            if (is(i, "<<<")) fail(i, "a kernel launch inside device code (dynamic parallelism)");
        }
        break;
      }
      case EntityKind::Class:
        if (mentions_host_only(e.first, e.last))
          blank(device_, e.first, e.last);
        else
          device_edits(e.children, true);
        break;
      case EntityKind::Declaration:
        if (e.device_variable || e.is_device) break;
        if (mentions_host_only(e.first, e.last)) blank(device_, e.first, e.last);
        break;
      case EntityKind::Empty:
      case EntityKind::Label:
        break;
    }
  }
}

// The source text of tokens first..last with comments dropped and each run of spacing made one
// space: the spelling of template arguments in name expressions.
std::string Splitter::joined(std::size_t first, std::size_t last) const {
  std::string out;
  for (std::size_t i = first; i <= last; ++i) {
    if (i > first && tok_[i].begin > tok_[i - 1].end) out += ' ';
    out += std::string(text(i));
  }
  return out;
}

int Splitter::slot_for(const std::string& name_expression) {
  auto it = slots_.find(name_expression);
  if (it != slots_.end()) return it->second;
  int slot = static_cast<int>(out_.name_expressions.size());
  out_.name_expressions.push_back(name_expression);
  slots_[name_expression] = slot;
  return slot;
}

const KernelInfo* Splitter::find_kernel(std::string_view name, std::size_t at) const {
  const KernelInfo* found = nullptr;
  for (const auto& k : out_.kernels) {
    if (k.name != name) continue;
    if (found) fail(at, "kernel name " + std::string(name) + " names more than one kernel");
    found = &k;
  }
  return found;
}

void Splitter::host_edits(const std::vector<Entity>& entities, bool in_class) {
  for (const Entity& e : entities) {
    switch (e.kind) {
      case EntityKind::Directive: {
        Directive d = parse_directive(text(e.first));
        if (d.name == "include") {
          IncludeTarget target = parse_include(d.rest);
          if (!target.header.empty() && classify_header(target.header) == HeaderUse::DeviceOnly)
            blank(host_, e.first, e.last);
        } else if (d.name == "pragma" && starts_with(d.rest, "once")) {
          blank(host_, e.first, e.last);
        }
        break;
      }
      case EntityKind::Namespace:
      case EntityKind::Linkage:
        host_edits(e.children, false);
        break;
      case EntityKind::Function: {
        if (e.is_global) {
          if (e.is_host || e.is_device) fail(e.first, "a __global__ function also marked __host__ or __device__");
          // The kernel becomes a declaration: its body becomes ';'.
          std::string replacement = ";";
          for (std::size_t b = tok_[e.body_open].begin; b < tok_[e.body_close].end; ++b)
            if (src_[b] == '\n') replacement += '\n';
          host_.push_back({tok_[e.body_open].begin, tok_[e.body_close].end, replacement});
        } else if (e.is_device && !e.is_host) {
          if (in_class) {
            std::string replacement = ";";
            for (std::size_t b = tok_[e.body_open].begin; b < tok_[e.body_close].end; ++b)
              if (src_[b] == '\n') replacement += '\n';
            host_.push_back({tok_[e.body_open].begin, tok_[e.body_close].end, replacement});
          } else {
            blank(host_, e.first, e.last);
          }
        } else {
          rewrite_host_range(e.body_open, e.body_close);
        }
        break;
      }
      case EntityKind::FunctionDecl:
        if (e.is_device && !e.is_host && !e.is_global && !in_class)
          blank(host_, e.first, e.last);
        else if (e.is_global && e.explicit_instantiation)
          blank(host_, e.first, e.last);
        break;
      case EntityKind::Class:
        host_edits(e.children, true);
        break;
      case EntityKind::Declaration:
        if (e.device_variable || (e.is_device && !e.is_host) || (e.explicit_instantiation && e.is_global))
          blank(host_, e.first, e.last);
        else if (e.has_eq)
          rewrite_host_range(e.first, e.last);  // initializers may mention kernels
        break;
      case EntityKind::Empty:
      case EntityKind::Label:
        break;
    }
  }
}

void Splitter::rewrite_host_range(std::size_t begin, std::size_t end) {
  for (std::size_t i = begin; i <= end && i < tok_.size(); ++i) {
    if (is(i, "<<<")) {
      i = rewrite_launch(i);
      continue;
    }
    if (is_ident(i) && !kernel_decl_tokens_.count(i)) {
      bool kernel_name = false;
      for (const auto& k : out_.kernels) kernel_name = kernel_name || k.name == text(i);
      if (kernel_name) i = rewrite_reference(i, end);
    }
  }
}

// The type lists of the dispatch macros the shim defines, with the spelling of each type in the
// device part (how the host's scalar_t names it there).
const std::vector<std::pair<std::string, std::string>>* dispatch_types(std::string_view macro) {
  static const std::vector<std::pair<std::string, std::string>> floating{{"double", "double"}, {"float", "float"}};
  static const std::vector<std::pair<std::string, std::string>> integral{{"uint8_t", "unsigned char"},
                                                                         {"int8_t", "signed char"},
                                                                         {"int32_t", "int"},
                                                                         {"int64_t", "long"},
                                                                         {"int16_t", "short"}};
  static const std::vector<std::pair<std::string, std::string>> all{
      {"uint8_t", "unsigned char"}, {"int8_t", "signed char"}, {"int32_t", "int"}, {"int64_t", "long"},
      {"int16_t", "short"},         {"double", "double"},      {"float", "float"}};
  if (macro == "AT_DISPATCH_FLOATING_TYPES") return &floating;
  if (macro == "AT_DISPATCH_INTEGRAL_TYPES") return &integral;
  if (macro == "AT_DISPATCH_ALL_TYPES") return &all;
  return nullptr;
}

std::size_t Splitter::rewrite_launch(std::size_t at) {
  // The callee: [::] [ns ::]* name [<targs>]
  if (at == 0) fail(at, "a launch without a kernel");
  std::size_t name = at - 1, targs_open = npos, targs_close = npos;
  if (is(name, ">") || is(name, ">>")) {
    if (is(name, ">>")) fail(at, "cannot read the template arguments of a launched kernel");
    targs_close = name;
    targs_open = match_angle_backward(targs_close);
    if (targs_open == npos || targs_open == 0) fail(at, "cannot read the template arguments of a launched kernel");
    name = targs_open - 1;
  }
  if (!is_ident(name)) fail(at, "a launch whose kernel is not a plain name (a function pointer or a macro argument?)");
  std::size_t callee_begin = name;
  while (callee_begin >= 2 && is(callee_begin - 1, "::") && is_ident(callee_begin - 2)) callee_begin -= 2;
  if (callee_begin >= 1 && is(callee_begin - 1, "::")) callee_begin -= 1;
  const KernelInfo* kernel = find_kernel(text(name), at);
  if (!kernel)
    fail(at, "launch of " + std::string(text(name)) + ", which is not a __global__ function of cuda_sources");
  // The closing >>> and the argument list.
  std::size_t close = npos;
  for (std::size_t i = at + 1; i < tok_.size(); ++i) {
    if (is(i, "(") || is(i, "[") || is(i, "{")) {
      i = match_[i];
      continue;
    }
    if (is(i, ">>>")) {
      close = i;
      break;
    }
    if (is(i, ";") || is(i, "}") || is(i, ")")) break;
  }
  if (close == npos) fail(at, "cannot find the >>> that closes a launch configuration");
  if (!is(close + 1, "(")) fail(close, "a launch configuration not followed by the kernel's arguments");

  LaunchSite site;
  site.line = line(at);
  site.kernel = kernel->qualified_name;
  std::string slot_expr;
  if (kernel->is_template && targs_open == npos)
    fail(at, "template kernel " + kernel->qualified_name + " launched without explicit template arguments");
  if (targs_open == npos) {
    site.name_expressions.push_back(kernel->qualified_name);
    slot_expr = std::to_string(slot_for(kernel->qualified_name));
  } else {
    bool uses_scalar_t = false;
    for (std::size_t i = targs_open + 1; i < targs_close; ++i) uses_scalar_t = uses_scalar_t || is(i, "scalar_t");
    std::string macro;
    if (uses_scalar_t) {
      // The innermost AT_DISPATCH_* call around the launch.
      for (std::size_t i = at; i-- > 0;) {
        if (is(i, "(") && match_[i] > at && i > 0 && is_ident(i - 1) && starts_with(text(i - 1), "AT_DISPATCH_")) {
          macro = std::string(text(i - 1));
          break;
        }
      }
    }
    if (!macro.empty()) {
      const auto* types = dispatch_types(macro);
      if (!types) fail(at, "dispatch macro " + macro + " is not supported on the fast path");
      std::string host_types, ids;
      for (const auto& [host_type, device_type] : *types) {
        std::string expr = kernel->qualified_name + "<";
        for (std::size_t i = targs_open + 1; i < targs_close; ++i) {
          if (i > targs_open + 1) expr += " ";
          expr += is(i, "scalar_t") ? device_type : std::string(text(i));
        }
        expr += ">";
        site.name_expressions.push_back(expr);
        host_types += ", " + host_type;
        ids += (ids.empty() ? "" : ", ") + std::to_string(slot_for(expr));
      }
      slot_expr = "::dbfp::slot_for<scalar_t" + host_types + ">(" + ids + ")";
    } else {
      std::string expr = kernel->qualified_name + "<" + joined(targs_open + 1, targs_close - 1) + ">";
      site.name_expressions.push_back(expr);
      slot_expr = std::to_string(slot_for(expr));
    }
  }
  std::string callee(src_.substr(tok_[callee_begin].begin, tok_[at - 1].end - tok_[callee_begin].begin));
  site.replacement = "::dbfp::launcher<decltype(&" + callee + ")>(::dbfp::kernel_slot(" + slot_expr + "), ";
  std::string newlines;
  for (std::size_t b = tok_[callee_begin].begin; b < tok_[at].end; ++b)
    if (src_[b] == '\n') newlines += '\n';
  host_.push_back({tok_[callee_begin].begin, tok_[at].end, site.replacement + newlines});
  host_.push_back({tok_[close].begin, tok_[close].end, ")"});
  out_.launches.push_back(std::move(site));
  return close;
}

// A kernel named outside a launch (cudaFuncSetAttribute(k, ...), (void*)k, &k<float>): becomes the
// kernel's runtime handle, a cudaKernel_t as const void*, which the runtime API accepts wherever
// it takes a kernel.
std::size_t Splitter::rewrite_reference(std::size_t at, std::size_t end) {
  if (at > 0 && (is(at - 1, ".") || is(at - 1, "->"))) return at;
  if (at > 0 && is(at - 1, "::") && !(at >= 2 && is_ident(at - 2))) return at;
  const KernelInfo* kernel = find_kernel(text(at), at);
  std::size_t last = at;
  std::string expr = kernel->qualified_name;
  if (is(at + 1, "<")) {
    std::size_t close = match_angle_forward(at + 1, end + 1);
    if (close == npos) return at;
    if (is(close + 1, "<<<")) return at;  // a launch; handled when its <<< comes
    expr += "<" + joined(at + 2, close - 1) + ">";
    last = close;
  } else if (is(at + 1, "<<<")) {
    return at;
  } else if (kernel->is_template) {
    return at;  // a template named without arguments: left alone (g++ reports it if it matters)
  }
  if (is(last + 1, "(")) return last;  // called like a function: not ours to fix
  std::size_t first = at;
  while (first >= 2 && is(first - 1, "::") && is_ident(first - 2)) first -= 2;
  if (first >= 1 && is(first - 1, "&") &&
      (first < 2 || is(first - 2, "(") || is(first - 2, ",") || is(first - 2, "=") || is(first - 2, ")")))
    first -= 1;  // &k: the handle is already an address
  int slot = slot_for(expr);
  host_.push_back({tok_[first].begin, tok_[last].end, "::dbfp::kernel_ref(" + std::to_string(slot) + ")"});
  return last;
}

Result<SplitSource> Splitter::run() {
  try {
    match_brackets();
    std::vector<Entity> entities = parse(0, tok_.size(), false);
    std::vector<std::string> ns;
    collect_kernels(entities, ns);
    device_edits(entities, false);
    host_edits(entities, false);
    // Device code must not launch kernels; host code launches only those it can name.
    out_.device_source = apply(device_);
    out_.host_source = apply(host_);
    std::set<std::string> libs;
    for (std::size_t i = 0; i < tok_.size(); ++i) {
      if (!is_ident(i)) continue;
      std::string_view s = text(i);
      if (starts_with(s, "cublasLt"))
        libs.insert("cublasLt");
      else if (starts_with(s, "cublas"))
        libs.insert("cublas");
      else if (starts_with(s, "curandCreate") || starts_with(s, "curandGenerate") ||
               starts_with(s, "curandSetPseudo") || starts_with(s, "curandDestroy"))
        libs.insert("curand");
      else if (starts_with(s, "cusparse"))
        libs.insert("cusparse");
      else if (starts_with(s, "cufft"))
        libs.insert("cufft");
      else if (starts_with(s, "cusolver"))
        libs.insert("cusolver");
      else if (starts_with(s, "cudnn"))
        libs.insert("cudnn");  // at::native::getCudnnHandle() and the cuDNN API (shim/dbfp/torch_cudnn.h)
      else if (s.size() > 2 && starts_with(s, "cu") && std::isupper(static_cast<unsigned char>(s[2])) && is(i + 1, "("))
        libs.insert("cuda");  // the driver API: cuMemAlloc(...), cuLaunchKernel(...)
    }
    out_.host_libraries.assign(libs.begin(), libs.end());
    return std::move(out_);
  } catch (const SplitError& error) {
    return make_error(error.message);
  }
}

}  // namespace

HeaderUse classify_header(std::string_view header) { return classify_header_impl(header); }

Result<SplitSource> split_cuda_source(std::string_view source) {
  auto tokens = scan_source(source);
  if (!tokens) return make_error("cuda_sources: " + tokens.error().message);
  return Splitter(source, std::move(tokens.value())).run();
}

bool is_declarations_only(std::string_view source) {
  auto tokens = scan_source(source);
  if (!tokens) return false;
  for (const Token& t : tokens.value()) {
    if (t.kind == TokenKind::Preprocessor) {
      Directive d = parse_directive(token_text(source, t));
      if (d.name != "include" && d.name != "pragma") return false;
      continue;
    }
    std::string_view s = token_text(source, t);
    if (s == "{" || s == "=" || s == "using" || s == "namespace" || s == "typedef" || s == "static") return false;
  }
  return true;
}

}  // namespace dicebench::fastpath
