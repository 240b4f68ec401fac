// Plain prompt templates: {{ARCH}}, {{EXAMPLE_ARCH}}, {{EXAMPLE_NEW_ARCH}} replaced byte for byte.
#include "benchmarks/kernelbench/prompt_template.hpp"

#include <algorithm>
#include <exception>
#include <optional>

#include "core/base/sha256.hpp"
#include "core/base/whole_file.hpp"

namespace dicebench::kernelbench::detail {
namespace {

namespace fs = std::filesystem;

bool name_start(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool name_char(char c) { return name_start(c) || (c >= '0' && c <= '9'); }

struct Placeholder {
  std::size_t begin, end;  // [begin, end) covers "{{NAME}}"
  std::string name;
};

// The placeholder starting at text[pos], if there is one.
std::optional<Placeholder> placeholder_at(const std::string& text, std::size_t pos) {
  if (text.compare(pos, 2, "{{") != 0) return std::nullopt;
  std::size_t i = pos + 2;
  if (i >= text.size() || !name_start(text[i])) return std::nullopt;
  while (i < text.size() && name_char(text[i])) ++i;
  if (text.compare(i, 2, "}}") != 0) return std::nullopt;
  return Placeholder{pos, i + 2, text.substr(pos + 2, i - pos - 2)};
}

std::size_t line_of(const std::string& text, std::size_t pos) {
  return 1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(pos), '\n'));
}

}  // namespace

Result<TemplatePlan> plan_template_prompt(const std::filesystem::path& template_file,
                                          const std::filesystem::path& example_arch,
                                          const std::filesystem::path& example_new_arch) {
  try {
    if (template_file.empty()) {
      return make_error("prompt style 'template' needs a template file, and none was given");
    }
    Result<std::string> text = read_whole_file(template_file);
    if (!text) return text.error();
    TemplatePlan plan;
    plan.files.push_back(PromptFile{"template", template_file, sha256_hex(text.value())});

    // First pass: find the placeholders and check their names.
    std::vector<Placeholder> found;
    bool uses_arch = false, uses_example = false, uses_new_example = false;
    for (std::size_t pos = 0; pos < text->size();) {
      std::optional<Placeholder> p = placeholder_at(text.value(), pos);
      if (!p) {
        ++pos;
        continue;
      }
      if (p->name == "ARCH") {
        uses_arch = true;
      } else if (p->name == "EXAMPLE_ARCH") {
        uses_example = true;
      } else if (p->name == "EXAMPLE_NEW_ARCH") {
        uses_new_example = true;
      } else {
        return make_error(template_file.string() + ":" + std::to_string(line_of(text.value(), p->begin)) +
                          ": unknown placeholder {{" + p->name +
                          "}} (known: {{ARCH}}, {{EXAMPLE_ARCH}}, {{EXAMPLE_NEW_ARCH}})");
      }
      pos = p->end;
      found.push_back(std::move(*p));
    }
    if (!uses_arch) {
      return make_error(template_file.string() + ": the template has no {{ARCH}} placeholder for the problem source");
    }

    // The example files, only when the template uses them.
    const fs::path dir = template_file.parent_path();
    std::string example_text, new_example_text;
    auto load = [&](bool used, const fs::path& given, const char* default_name, const char* role,
                    std::string* out) -> Result<void> {
      if (!used) return {};
      const fs::path path = given.empty() ? dir / default_name : given;
      Result<std::string> bytes = read_whole_file(path);
      if (!bytes) {
        return make_error(template_file.string() + " uses {{" +
                          std::string(std::string_view(role) == "example_arch" ? "EXAMPLE_ARCH" : "EXAMPLE_NEW_ARCH") +
                          "}}, but " + bytes.error().message);
      }
      plan.files.push_back(PromptFile{role, path, sha256_hex(bytes.value())});
      *out = std::move(bytes.value());
      return {};
    };
    Result<void> loaded = load(uses_example, example_arch, "model_ex_add.py", "example_arch", &example_text);
    if (!loaded) return loaded.error();
    loaded = load(uses_new_example, example_new_arch, "model_new_ex_add.py", "example_new_arch", &new_example_text);
    if (!loaded) return loaded.error();
    plan.example_count = (uses_example || uses_new_example) ? 1 : 0;

    // Second pass: split at {{ARCH}}, substituting the examples.
    std::string piece;
    std::size_t copied = 0;
    for (const Placeholder& p : found) {
      piece.append(text.value(), copied, p.begin - copied);
      copied = p.end;
      if (p.name == "ARCH") {
        plan.pieces.push_back(std::move(piece));
        piece.clear();
      } else {
        piece += p.name == "EXAMPLE_ARCH" ? example_text : new_example_text;
      }
    }
    piece.append(text.value(), copied, std::string::npos);
    plan.pieces.push_back(std::move(piece));
    return plan;
  } catch (const std::exception& e) {
    return make_error(template_file.string() + ": " + e.what());
  }
}

}  // namespace dicebench::kernelbench::detail
