// PromptBuilder: picks the prompt source for a style and builds each problem's prompt.
#include "benchmarks/kernelbench/prompts.hpp"
#include "benchmarks/kernelbench/text_mode.hpp"

#include <exception>

#include <nlohmann/json.hpp>

#include "benchmarks/kernelbench/prompt_template.hpp"
#include "benchmarks/kernelbench/prompt_toml.hpp"

namespace dicebench::kernelbench {

Result<PromptBuilder> PromptBuilder::create(const PromptOptions& options, const std::filesystem::path& levels_root) {
  try {
    PromptBuilder builder;
    // KernelBench's get_prompt_for_backend() lower-cases the option and the backend.
    builder.style_ = ascii_lower(options.style);
    builder.backend_ = ascii_lower(options.backend);
    builder.precision_ = options.precision;

    if (builder.style_ == "template") {
      Result<detail::TemplatePlan> plan =
          detail::plan_template_prompt(options.template_file, options.example_arch, options.example_new_arch);
      if (!plan) return plan.error();
      builder.from_template_ = true;
      builder.pieces_ = std::move(plan->pieces);
      builder.files_ = std::move(plan->files);
      builder.example_count_ = plan->example_count;
      return builder;
    }

    const bool known_style =
        builder.style_ == "zero_shot" || builder.style_ == "one_shot" || builder.style_ == "few_shot";
    Result<std::filesystem::path> toml_file = detail::find_prompts_toml(options.prompts_dir, levels_root);
    if (!toml_file) {
      if (!known_style) {
        return make_error("unknown prompt style '" + options.style +
                          "'; valid: zero_shot, one_shot, few_shot, template");
      }
      return toml_file.error();
    }
    Result<detail::TomlPlan> plan =
        detail::plan_toml_prompt(toml_file.value(), levels_root, builder.style_, builder.backend_, builder.precision_);
    if (!plan) return plan.error();
    builder.precision_ = plan->precision;
    builder.format_text_ = std::move(plan->format_text);
    builder.context_ = std::move(plan->context);
    builder.files_ = std::move(plan->files);
    builder.example_count_ = plan->example_count;

    // Surface placeholder errors now rather than at the first problem.
    FormatContext trial = builder.context_;
    trial["ref_arch_src"] = "";
    Result<std::string> checked = python_format(builder.format_text_, trial);
    if (!checked) {
      return make_error(toml_file->string() + ": prompt for option '" + builder.style_ +
                        "': " + checked.error().message);
    }
    return builder;
  } catch (const std::exception& e) {
    return make_error(std::string("cannot set up KernelBench prompts: ") + e.what());
  }
}

Result<std::string> PromptBuilder::build(const Problem& problem) const {
  try {
    if (from_template_) {
      std::string prompt;
      std::size_t size = problem.source.size() * (pieces_.size() - 1);
      for (const std::string& piece : pieces_) size += piece.size();
      prompt.reserve(size);
      for (std::size_t i = 0; i < pieces_.size(); ++i) {
        if (i > 0) prompt += problem.source;
        prompt += pieces_[i];
      }
      return prompt;
    }
    FormatContext context = context_;
    context["ref_arch_src"] = universal_newlines(problem.source);
    Result<std::string> formatted = python_format(format_text_, context);
    if (!formatted) {
      return make_error("prompt for level " + std::to_string(problem.level) + " problem " + std::to_string(problem.id) +
                        ": " + formatted.error().message);
    }
    return std::string(python_strip(formatted.value())) + "\n";
  } catch (const std::exception& e) {
    return make_error("prompt for level " + std::to_string(problem.level) + " problem " + std::to_string(problem.id) +
                      ": " + e.what());
  }
}

std::string PromptBuilder::describe() const {
  nlohmann::ordered_json out;
  out["style"] = style_;
  out["source"] = from_template_ ? "template" : "prompts.toml";
  out["backend"] = backend_;
  out["precision"] = precision_;
  if (from_template_) out["note"] = "backend and precision do not change a template prompt";
  out["examples"] = example_count_;
  nlohmann::ordered_json files = nlohmann::ordered_json::array();
  for (const PromptFile& file : files_) {
    files.push_back({{"role", file.role}, {"path", file.path.string()}, {"sha256", file.sha256}});
  }
  out["files"] = std::move(files);
  return out.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace dicebench::kernelbench
