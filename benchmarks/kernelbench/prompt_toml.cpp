// Composes prompts from KernelBench's prompts.toml exactly as KernelBench does.
//
// Mirrors ScalingIntelligence/KernelBench src/kernelbench/prompt_constructor_toml.py,
// render_prompt_by_option() and PromptConfig.compose_blocks(), as stored at commit
// 76f4eb7de3056e3472adf19f7f1c1ccb9b308d0d (the composition is the same at aade13e01c3b); the
// prompts.toml in ../shared/kernelbench/prompts is from 423217d. What is mirrored:
//  - components of options.<style>, in order; "problem_statement" and "instruction" come from
//    [shared], formatted once with backend_display and again with the full context at the end;
//    "hardware_*" from templates.hardware, any other name from templates.common, each through
//    compose_blocks (value.strip() + "\n");
//  - context: backend (upper-case for cuda/cute, else capitalized), backend_display (default
//    backend.upper()), problem_statement, instruction, precision_display (default
//    precision.upper()), examples_intro and examples_entries when the option has a truthy
//    requires_example;
//  - examples: one_shot uses (backends.X.few_shot_example_arch or shared.few_shot_example_arch,
//    backends.X.one_shot_new_arch) labelled "Example:"; few_shot uses backends.X.few_shot_examples
//    labelled "Example 1:", "Example 2:", ... with the few-shot intro, or falls back to the one-shot
//    pair and intro when that list is missing or empty; entries are example_entry_template
//    .strip().format(...) joined by "\n\n" and stripped; intros are stripped then formatted;
//  - prompt_text = "\n".join(parts).strip() + "\n"; result = prompt_text.format(**context)
//    .strip() + "\n"; example files and the problem source are read as Python's text mode does
//    (universal newlines).
// Deliberate differences: a missing example file is an error (upstream read_file() returns "" and
// prints a line); hardware-aware options (requires_gpu) are refused; an empty precision uses
// meta.default_precision (or fp32) and must exist in [precision].
#include "benchmarks/kernelbench/prompt_toml.hpp"
#include "core/base/one_line.hpp"

#include <algorithm>
#include <exception>
#include <optional>

#include <toml++/toml.h>

#include "benchmarks/kernelbench/text_mode.hpp"
#include "core/base/sha256.hpp"
#include "core/base/whole_file.hpp"

namespace dicebench::kernelbench::detail {
namespace {

namespace fs = std::filesystem;

std::string at(const fs::path& file, const toml::node& node) {
  const auto& begin = node.source().begin;
  if (begin.line == 0) return file.string();
  return file.string() + ":" + std::to_string(begin.line) + ":" + std::to_string(begin.column);
}

std::string type_name(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    default:
      return "a date/time";
  }
}

// Python truthiness of a TOML value, for `if option_data.get("requires_example")`.
bool truthy(const toml::node* node) {
  if (node == nullptr) return false;
  if (const auto* s = node->as_string()) return !s->get().empty();
  if (const auto* b = node->as_boolean()) return b->get();
  if (const auto* i = node->as_integer()) return i->get() != 0;
  if (const auto* f = node->as_floating_point()) return f->get() != 0.0;
  if (const auto* a = node->as_array()) return !a->empty();
  if (const auto* t = node->as_table()) return !t->empty();
  return true;
}

std::string keys_of(const toml::table* table) {
  std::vector<std::string> keys;
  if (table != nullptr) {
    for (const auto& [key, value] : *table) keys.emplace_back(key.str());
  }
  std::sort(keys.begin(), keys.end());
  std::string out;
  for (const auto& k : keys) out += (out.empty() ? "" : ", ") + k;
  return out.empty() ? "none" : out;
}

// Normalized, without a trailing separator, so that parent_path() is the parent folder.
fs::path clean_dir(const fs::path& p) {
  fs::path out = p.lexically_normal();
  if (out.has_relative_path() && out.filename().empty()) out = out.parent_path();
  return out;
}

void add_unique(std::vector<fs::path>* list, const fs::path& p) {
  const fs::path clean = p.lexically_normal();
  if (std::find(list->begin(), list->end(), clean) == list->end()) list->push_back(clean);
}

class Composer {
 public:
  Composer(fs::path file, const toml::table& data, std::vector<fs::path> roots, fs::path prompts_dir)
      : file_(std::move(file)), data_(data), roots_(std::move(roots)), prompts_dir_(std::move(prompts_dir)) {}

  Result<TomlPlan> run(const std::string& option, const std::string& backend, const std::string& precision);

 private:
  Error fail(const std::string& message) const { return make_error(file_.string() + ": " + message); }
  Error fail(const toml::node& node, const std::string& message) const {
    return make_error(at(file_, node) + ": " + message);
  }

  // A string value; `what` names it in errors.
  Result<std::string> string_of(const toml::node& node, const std::string& what) const {
    if (const auto* s = node.as_string()) return s->get();
    return fail(node, what + " must be a string, not " + type_name(node));
  }

  // PromptConfig.compose_blocks([key]) for one dotted key: value.strip() + "\n".
  Result<std::string> compose_block(const std::string& dotted) const {
    const toml::node* node = &data_;
    std::size_t start = 0;
    while (true) {
      const std::size_t dot = dotted.find('.', start);
      const std::string part = dotted.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
      const toml::table* table = node->as_table();
      node = table != nullptr ? table->get(part) : nullptr;
      if (node == nullptr) return fail("compose key not found: " + dotted);
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    if (!node->is_string()) return fail(*node, "compose key must resolve to a string: " + dotted);
    return std::string(python_strip(node->as_string()->get())) + "\n";
  }

  // An example file named in prompts.toml, read as Python's open(path, "r").read() does.
  Result<std::string> read_example(const toml::node& node, const std::string& key, const std::string& role,
                                   std::vector<PromptFile>* files) const {
    Result<std::string> relative = string_of(node, key);
    if (!relative) return relative.error();
    const fs::path given(relative.value());
    std::vector<fs::path> candidates;
    if (given.is_absolute()) {
      add_unique(&candidates, given);
    } else {
      for (const fs::path& root : roots_) add_unique(&candidates, root / given);
      bool prefixed = false;
      for (const char* prefix : {"src/kernelbench/prompts/", "src/prompts/"}) {
        if (!prefixed && relative->rfind(prefix, 0) == 0) {
          // "src/kernelbench/prompts/few_shot/x.py" -> <prompts folder>/few_shot/x.py
          add_unique(&candidates, prompts_dir_ / relative->substr(std::string_view(prefix).size()));
          prefixed = true;
        }
      }
      if (!prefixed) {
        add_unique(&candidates, prompts_dir_ / given);
        add_unique(&candidates, prompts_dir_ / given.filename());
      }
    }
    for (const fs::path& candidate : candidates) {
      std::error_code ec;
      if (!fs::is_regular_file(candidate, ec)) continue;
      Result<std::string> bytes = read_whole_file(candidate);
      if (!bytes) return bytes.error();
      files->push_back(PromptFile{role, candidate, sha256_hex(bytes.value())});
      return universal_newlines(bytes.value());
    }
    std::string looked;
    for (const fs::path& c : candidates) looked += (looked.empty() ? "" : ", ") + c.string();
    return fail(node, "example file \"" + relative.value() + "\" (" + key + ") not found; looked at " + looked);
  }

  fs::path file_;
  const toml::table& data_;
  std::vector<fs::path> roots_;
  fs::path prompts_dir_;
};

Result<TomlPlan> Composer::run(const std::string& option, const std::string& backend, const std::string& precision) {
  TomlPlan plan;
  plan.option = option;
  plan.backend = backend;

  const toml::table* backends = data_["backends"].as_table();
  const toml::node* backend_node = backends != nullptr ? backends->get(backend) : nullptr;
  if (backend_node == nullptr) {
    return fail("unknown backend '" + backend + "'; valid: " + keys_of(backends));
  }
  const toml::table* backend_data = backend_node->as_table();
  if (backend_data == nullptr) return fail(*backend_node, "backends." + backend + " must be a table");

  const toml::table* options = data_["options"].as_table();
  const toml::node* option_node = options != nullptr ? options->get(option) : nullptr;
  if (option_node == nullptr) {
    return fail("unknown prompt style '" + option + "'; valid: " + keys_of(options) + " (from this file), template");
  }
  const toml::table* option_data = option_node->as_table();
  if (option_data == nullptr) return fail(*option_node, "options." + option + " must be a table");

  std::vector<std::string> components;
  const toml::node* components_node = option_data->get("components");
  if (components_node == nullptr) return fail(*option_node, "options." + option + " has no components");
  const toml::array* components_array = components_node->as_array();
  if (components_array == nullptr) return fail(*components_node, "options." + option + ".components must be an array");
  for (const toml::node& element : *components_array) {
    Result<std::string> name = string_of(element, "options." + option + ".components entry");
    if (!name) return name.error();
    components.push_back(name.value());
  }
  if (truthy(option_data->get("requires_gpu"))) {
    return fail(*option_node, "options." + option +
                                  " needs GPU hardware information (requires_gpu), which dicebench does not provide");
  }

  // shared = cfg.data.get("shared", {}); backend_display = backend_data.get(..., backend.upper())
  const toml::node* shared_node = data_.get("shared");
  const toml::table empty_table;
  const toml::table* shared = &empty_table;
  if (shared_node != nullptr) {
    shared = shared_node->as_table();
    if (shared == nullptr) return fail(*shared_node, "shared must be a table");
  }
  std::string backend_display = ascii_upper(backend);
  if (const toml::node* node = backend_data->get("backend_display")) {
    Result<std::string> value = string_of(*node, "backends." + backend + ".backend_display");
    if (!value) return value.error();
    backend_display = value.value();
  }
  const FormatContext display_only = {{"backend_display", backend_display}};

  // problem_statement / instruction: shared.get(key, "").format(backend_display=...)
  std::string shared_text[2];
  const char* const shared_keys[2] = {"problem_statement", "instruction"};
  for (int i = 0; i < 2; ++i) {
    const toml::node* node = shared->get(shared_keys[i]);
    if (node == nullptr) continue;
    Result<std::string> raw = string_of(*node, std::string("shared.") + shared_keys[i]);
    if (!raw) return raw.error();
    Result<std::string> formatted = python_format(raw.value(), display_only);
    if (!formatted) return fail(*node, std::string("shared.") + shared_keys[i] + ": " + formatted.error().message);
    shared_text[i] = formatted.value();
  }

  FormatContext& context = plan.context;
  context["backend"] = (backend == "cuda" || backend == "cute") ? ascii_upper(backend) : ascii_capitalize(backend);
  context["backend_display"] = backend_display;
  context["problem_statement"] = shared_text[0];
  context["instruction"] = shared_text[1];

  // precision_display
  std::string precision_key = precision;
  if (precision_key.empty()) {
    precision_key = "fp32";
    if (const toml::table* meta = data_["meta"].as_table()) {
      if (const toml::node* node = meta->get("default_precision")) {
        Result<std::string> value = string_of(*node, "meta.default_precision");
        if (!value) return value.error();
        precision_key = value.value();
      }
    }
  }
  plan.precision = precision_key;
  const toml::table* precisions = data_["precision"].as_table();
  const toml::node* precision_node = precisions != nullptr ? precisions->get(precision_key) : nullptr;
  if (precision_node == nullptr) {
    return fail("unknown precision '" + precision_key + "'; valid: " + keys_of(precisions));
  }
  const toml::table* precision_data = precision_node->as_table();
  if (precision_data == nullptr) return fail(*precision_node, "precision." + precision_key + " must be a table");
  context["precision_display"] = ascii_upper(precision_key);
  if (const toml::node* node = precision_data->get("precision_display")) {
    Result<std::string> value = string_of(*node, "precision." + precision_key + ".precision_display");
    if (!value) return value.error();
    context["precision_display"] = value.value();
  }

  // Examples.
  const toml::node* requires_node = option_data->get("requires_example");
  if (truthy(requires_node)) {
    Result<std::string> entry_template = compose_block("templates.common.example_entry_template");
    if (!entry_template) return entry_template.error();
    Result<std::string> intro_one = compose_block("templates.common.example_intro_one_shot");
    if (!intro_one) return intro_one.error();
    Result<std::string> intro_few = compose_block("templates.common.example_intro_few_shot");
    if (!intro_few) return intro_few.error();
    const std::string entry_format(python_strip(entry_template.value()));
    Result<std::string> intro_one_text = python_format(python_strip(intro_one.value()), display_only);
    if (!intro_one_text) return fail("templates.common.example_intro_one_shot: " + intro_one_text.error().message);
    Result<std::string> intro_few_text = python_format(python_strip(intro_few.value()), display_only);
    if (!intro_few_text) return fail("templates.common.example_intro_few_shot: " + intro_few_text.error().message);

    std::vector<std::string> entries;
    std::string examples_intro = intro_one_text.value();
    auto render_entry = [&](const std::string& input, const std::string& output,
                            const std::string& label) -> Result<std::string> {
      const FormatContext entry_context = {{"example_label", label},
                                           {"input_code", input},
                                           {"output_code", output},
                                           {"backend_display", backend_display}};
      Result<std::string> entry = python_format(entry_format, entry_context);
      if (!entry) return fail("templates.common.example_entry_template: " + entry.error().message);
      return entry;
    };
    auto one_shot_pair = [&]() -> Result<void> {
      // backend_data.get("few_shot_example_arch") or shared.get("few_shot_example_arch")
      const toml::node* arch = backend_data->get("few_shot_example_arch");
      std::string arch_key = "backends." + backend + ".few_shot_example_arch";
      if (!truthy(arch)) {
        arch = shared->get("few_shot_example_arch");
        arch_key = "shared.few_shot_example_arch";
      }
      if (arch == nullptr) {
        return fail("option " + option + " needs an example: neither backends." + backend +
                    ".few_shot_example_arch nor shared.few_shot_example_arch is set");
      }
      const toml::node* new_arch = backend_data->get("one_shot_new_arch");
      if (new_arch == nullptr) {
        return fail(*backend_node, "option " + option + " needs backends." + backend + ".one_shot_new_arch");
      }
      Result<std::string> input = read_example(*arch, arch_key, "example_arch", &plan.files);
      if (!input) return input.error();
      Result<std::string> output =
          read_example(*new_arch, "backends." + backend + ".one_shot_new_arch", "example_new_arch", &plan.files);
      if (!output) return output.error();
      Result<std::string> entry = render_entry(input.value(), output.value(), "Example:");
      if (!entry) return entry.error();
      entries.push_back(entry.value());
      return {};
    };

    const std::string requires_value =
        requires_node->as_string() != nullptr ? requires_node->as_string()->get() : std::string();
    if (requires_value == "few_shot") {
      const toml::node* few = backend_data->get("few_shot_examples");
      if (truthy(few)) {
        const toml::array* list = few->as_array();
        if (list == nullptr) return fail(*few, "backends." + backend + ".few_shot_examples must be an array");
        examples_intro = intro_few_text.value();
        int index = 0;
        for (const toml::node& pair_node : *list) {
          ++index;
          const toml::array* pair = pair_node.as_array();
          if (pair == nullptr || pair->size() != 2) {
            return fail(pair_node, "backends." + backend + ".few_shot_examples entries must be [input, output] pairs");
          }
          const std::string key = "backends." + backend + ".few_shot_examples[" + std::to_string(index - 1) + "]";
          const std::string role = "few_shot_" + std::to_string(index);
          Result<std::string> input = read_example(*pair->get(0), key, role + "_input", &plan.files);
          if (!input) return input.error();
          Result<std::string> output = read_example(*pair->get(1), key, role + "_output", &plan.files);
          if (!output) return output.error();
          Result<std::string> entry =
              render_entry(input.value(), output.value(), "Example " + std::to_string(index) + ":");
          if (!entry) return entry.error();
          entries.push_back(entry.value());
        }
      } else {
        Result<void> fallback = one_shot_pair();
        if (!fallback) return fallback.error();
      }
    } else if (requires_value == "one_shot") {
      Result<void> single = one_shot_pair();
      if (!single) return single.error();
    }
    if (entries.empty()) {
      return fail(*requires_node, "no example entries could be constructed for option '" + option +
                                      "' (requires_example must be \"one_shot\" or \"few_shot\")");
    }
    std::string joined;
    for (std::size_t i = 0; i < entries.size(); ++i) joined += (i == 0 ? "" : "\n\n") + entries[i];
    context["examples_intro"] = examples_intro;
    context["examples_entries"] = std::string(python_strip(joined));
    plan.example_count = static_cast<int>(entries.size());
  }

  // Components, joined and stripped.
  std::string joined;
  for (std::size_t i = 0; i < components.size(); ++i) {
    const std::string& component = components[i];
    std::string part;
    if (component == "problem_statement" || component == "instruction") {
      part = context[component];
    } else {
      const std::string key =
          (component.rfind("hardware_", 0) == 0 ? "templates.hardware." : "templates.common.") + component;
      Result<std::string> block = compose_block(key);
      if (!block) return block.error();
      part = block.value();
    }
    joined += (i == 0 ? "" : "\n") + part;
  }
  plan.format_text = std::string(python_strip(joined)) + "\n";
  return plan;
}

}  // namespace

Result<std::filesystem::path> find_prompts_toml(const std::filesystem::path& prompts_dir,
                                                const std::filesystem::path& levels_root) {
  std::error_code ec;
  if (!prompts_dir.empty()) {
    if (fs::is_regular_file(prompts_dir, ec)) return fs::absolute(prompts_dir, ec).lexically_normal();
    const fs::path candidate = fs::absolute(prompts_dir / "prompts.toml", ec).lexically_normal();
    if (fs::is_regular_file(candidate, ec)) return candidate;
    return make_error("no prompts.toml at " + candidate.string() + " (the prompts folder that was given)");
  }
  const fs::path root = clean_dir(levels_root);
  const fs::path candidates[] = {(root.parent_path() / "src" / "kernelbench" / "prompts" / "prompts.toml"),
                                 (root / "src" / "kernelbench" / "prompts" / "prompts.toml"),
                                 (root / "prompts" / "prompts.toml")};
  std::string looked;
  for (const fs::path& candidate : candidates) {
    if (fs::is_regular_file(candidate, ec)) return candidate;
    looked += (looked.empty() ? "" : ", ") + candidate.string();
  }
  return make_error("no KernelBench prompts.toml found; looked at " + looked +
                    "; use a full KernelBench checkout or name the folder holding prompts.toml");
}

Result<TomlPlan> plan_toml_prompt(const std::filesystem::path& prompts_toml, const std::filesystem::path& levels_root,
                                  const std::string& option, const std::string& backend, const std::string& precision) {
  try {
    Result<std::string> bytes = read_whole_file(prompts_toml);
    if (!bytes) return bytes.error();
    toml::table data;
    try {
      data = toml::parse(bytes.value(), prompts_toml.string());
    } catch (const toml::parse_error& e) {
      return make_error(prompts_toml.string() + ":" + std::to_string(e.source().begin.line) + ":" +
                        std::to_string(e.source().begin.column) + ": " + on_one_line(e.description()));
    }
    const fs::path prompts_dir = prompts_toml.parent_path();
    // KernelBench checkout roots that the "src/kernelbench/prompts/..." paths are relative to.
    std::vector<fs::path> roots;
    const fs::path dir = clean_dir(prompts_dir);
    if (dir.filename() == "prompts" && dir.parent_path().filename() == "kernelbench" &&
        dir.parent_path().parent_path().filename() == "src") {
      add_unique(&roots, dir.parent_path().parent_path().parent_path());
    }
    add_unique(&roots, clean_dir(levels_root).parent_path());
    add_unique(&roots, clean_dir(levels_root));
    Composer composer(prompts_toml, data, roots, prompts_dir);
    Result<TomlPlan> plan = composer.run(option, backend, precision);
    if (!plan) return plan.error();
    plan->files.insert(plan->files.begin(), PromptFile{"prompts_toml", prompts_toml, sha256_hex(bytes.value())});
    return plan;
  } catch (const std::exception& e) {
    return make_error(prompts_toml.string() + ": " + e.what());
  }
}

}  // namespace dicebench::kernelbench::detail
