// Unit tests: prompt construction over our own prompt files in tests/data/kernelbench/prompts.
// The expected prompts were written by hand from KernelBench's composition rules (and agree with
// running KernelBench's own render_prompt_by_option on these files).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "benchmarks/kernelbench/problems.hpp"
#include "benchmarks/kernelbench/prompts.hpp"
#include "core/base/sha256.hpp"
#include "tests/benchmarks/kernelbench/test_support.hpp"

namespace kb = dicebench::kernelbench;
using kbtest::ScratchDir;
namespace fs = std::filesystem;

namespace {

fs::path prompts_dir() { return kbtest::data_dir() / "prompts"; }

kb::Problem problem(int level, int index) {
  auto problems = kb::load_level(kbtest::data_dir(), level);
  REQUIRE(problems.ok());
  return problems->at(static_cast<std::size_t>(index));
}

std::string prompt_file(const std::string& relative) { return kbtest::read_bytes(prompts_dir() / relative); }

kb::PromptBuilder make(const kb::PromptOptions& options, const fs::path& levels_root = kbtest::data_dir()) {
  auto builder = kb::PromptBuilder::create(options, levels_root);
  REQUIRE_MESSAGE(builder.ok(), (builder.ok() ? "" : builder.error().message));
  return std::move(builder).value();
}

std::string build(const kb::PromptBuilder& builder, const kb::Problem& p) {
  auto prompt = builder.build(p);
  REQUIRE_MESSAGE(prompt.ok(), (prompt.ok() ? "" : prompt.error().message));
  return prompt.value();
}

std::string create_error(const kb::PromptOptions& options, const fs::path& levels_root = kbtest::data_dir()) {
  auto builder = kb::PromptBuilder::create(options, levels_root);
  REQUIRE_FALSE(builder.ok());
  return builder.error().message;
}

kb::PromptOptions style(const std::string& name) {
  kb::PromptOptions options;
  options.style = name;
  return options;
}

// The pieces every prompt of our prompts.toml shares.
const std::string kStatement = "Speed up the model below with CUDA kernels; literal braces survive: {kept}.\n";
const std::string kTail =
    "\nTarget precision: 32-bit floats (CUDA backend).\n\n\nReply with one code block that defines ModelNew (CUDA "
    "kernels).\n";

std::string strip_trailing_newlines(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

}  // namespace

TEST_CASE("zero_shot composes problem_statement + arch_block + precision_note + instruction") {
  const auto builder = make(style("zero_shot"));
  const auto add = problem(1, 0);
  const std::string expected = kStatement + "\nModel to speed up:\n\n" + add.source + "\n" + kTail;
  KB_CHECK_SAME_TEXT(expected, build(builder, add));
  CHECK(builder.files().size() == 1);
  CHECK(builder.files()[0].role == "prompts_toml");
}

TEST_CASE("one_shot adds the example pair with the one-shot intro and label") {
  const auto builder = make(style("one_shot"));
  const auto add = problem(1, 0);
  const std::string expected = kStatement + "\nOne worked example with CUDA kernels:\n\nExample:\nBefore:\n" +
                               prompt_file("model_ex_add.py") + "\nAfter (CUDA kernels):\n" +
                               strip_trailing_newlines(prompt_file("model_new_ex_add.py")) +
                               "\n\nModel to speed up:\n\n" + add.source + "\n" + kTail;
  KB_CHECK_SAME_TEXT(expected, build(builder, add));
  // The example code is inserted as it is: "{not_a_placeholder}" in it is not formatted.
  CHECK(build(builder, add).find("# {not_a_placeholder}\n") != std::string::npos);
}

TEST_CASE("few_shot numbers the examples and uses the few-shot intro") {
  const auto builder = make(style("few_shot"));
  const auto relu = problem(1, 1);
  const std::string expected = kStatement + "\nWorked examples with CUDA kernels:\n\nExample 1:\nBefore:\n" +
                               prompt_file("few_shot/ex_scale.py") + "\nAfter (CUDA kernels):\n" +
                               prompt_file("few_shot/ex_scale_new.py") + "\n\nExample 2:\nBefore:\n" +
                               prompt_file("model_ex_add.py") + "\nAfter (CUDA kernels):\n" +
                               strip_trailing_newlines(prompt_file("model_new_ex_add.py")) +
                               "\n\nModel to speed up:\n\n" + relu.source + "\n" + kTail;
  KB_CHECK_SAME_TEXT(expected, build(builder, relu));
  std::vector<std::string> roles;
  for (const auto& f : builder.files()) roles.push_back(f.role);
  CHECK(roles == std::vector<std::string>{"prompts_toml", "few_shot_1_input", "few_shot_1_output", "few_shot_2_input",
                                          "few_shot_2_output"});
  CHECK(builder.files()[1].path == prompts_dir() / "few_shot" / "ex_scale.py");
}

TEST_CASE("few_shot falls back to one_shot for a backend without few_shot_examples (and display defaults)") {
  kb::PromptOptions options = style("few_shot");
  options.backend = "Triton";  // lower-cased as KernelBench does
  options.precision = "fp16";  // a [precision.fp16] table without precision_display
  const auto builder = make(options);
  const auto add = problem(1, 0);
  const std::string expected =
      "Speed up the model below with TRITON; literal braces survive: {kept}.\n\nOne worked example with "
      "TRITON:\n\nExample:\nBefore:\n" +
      prompt_file("model_ex_add.py") + "\nAfter (TRITON):\n" +
      strip_trailing_newlines(prompt_file("model_new_ex_add_triton.py")) + "\n\nModel to speed up:\n\n" + add.source +
      "\n\nTarget precision: FP16 (Triton backend).\n\n\nReply with one code block that defines "
      "ModelNew (TRITON).\n";
  KB_CHECK_SAME_TEXT(expected, build(builder, add));
}

TEST_CASE("the problem source is read as Python text mode reads it (CRLF becomes LF)") {
  const auto builder = make(style("zero_shot"));
  kb::Problem p = problem(1, 0);
  p.source = "line one\r\nline two\rline three\n";
  const std::string expected = kStatement + "\nModel to speed up:\n\nline one\nline two\nline three\n\n" + kTail;
  KB_CHECK_SAME_TEXT(expected, build(builder, p));
}

TEST_CASE("prompts.toml is found in a KernelBench checkout layout and example paths resolve against it") {
  ScratchDir scratch;
  const fs::path repo = scratch.path() / "repo";
  fs::create_directories(repo / "KernelBench");
  fs::copy(kbtest::data_dir() / "level1", repo / "KernelBench" / "level1");
  fs::create_directories(repo / "src" / "kernelbench");
  fs::copy(prompts_dir(), repo / "src" / "kernelbench" / "prompts", fs::copy_options::recursive);
  const auto builder = make(style("one_shot"), repo / "KernelBench");
  REQUIRE(builder.files().size() == 3);
  CHECK(builder.files()[0].path == repo / "src" / "kernelbench" / "prompts" / "prompts.toml");
  CHECK(builder.files()[1].path == repo / "src" / "kernelbench" / "prompts" / "model_ex_add.py");
  CHECK(builder.files()[2].path == repo / "src" / "kernelbench" / "prompts" / "model_new_ex_add.py");
  CHECK(builder.files()[1].sha256 == dicebench::sha256_hex(prompt_file("model_ex_add.py")));
}

TEST_CASE("prompts_dir overrides the search and a missing prompts.toml lists every place looked at") {
  ScratchDir scratch;
  fs::copy(kbtest::data_dir() / "level1", scratch.path() / "level1");
  SUBCASE("override") {
    kb::PromptOptions options = style("zero_shot");
    options.prompts_dir = prompts_dir();
    const auto builder = make(options, scratch.path());
    CHECK(builder.files()[0].path == prompts_dir() / "prompts.toml");
  }
  SUBCASE("not found") {
    CHECK(create_error(style("one_shot"), scratch.path()) ==
          "no KernelBench prompts.toml found; looked at " +
              (scratch.path().parent_path() / "src/kernelbench/prompts/prompts.toml").string() + ", " +
              (scratch.path() / "src/kernelbench/prompts/prompts.toml").string() + ", " +
              (scratch.path() / "prompts/prompts.toml").string() +
              "; use a full KernelBench checkout or name the folder holding prompts.toml");
  }
  SUBCASE("given folder without prompts.toml") {
    kb::PromptOptions options = style("one_shot");
    options.prompts_dir = scratch.path();
    CHECK(create_error(options) ==
          "no prompts.toml at " + (scratch.path() / "prompts.toml").string() + " (the prompts folder that was given)");
  }
}

TEST_CASE("unknown style or backend or precision lists the valid ones") {
  const std::string file = (prompts_dir() / "prompts.toml").string();
  CHECK(create_error(style("two_shot")) ==
        file + ": unknown prompt style 'two_shot'; valid: few_shot, one_shot, zero_shot (from this file), template");
  kb::PromptOptions backend = style("one_shot");
  backend.backend = "metal";
  CHECK(create_error(backend) == file + ": unknown backend 'metal'; valid: cuda, cute, triton");
  kb::PromptOptions precision = style("one_shot");
  precision.precision = "fp8";
  CHECK(create_error(precision) == file + ": unknown precision 'fp8'; valid: fp16, fp32");
  // Without any prompts.toml, an unknown style is still named as such.
  ScratchDir scratch;
  CHECK(create_error(style("two_shot"), scratch.path()) ==
        "unknown prompt style 'two_shot'; valid: zero_shot, one_shot, few_shot, template");
}

TEST_CASE("malformed prompts.toml is reported as FILE:LINE:COLUMN: message") {
  ScratchDir scratch;
  const fs::path file = scratch.path() / "prompts.toml";
  kbtest::write_bytes(file, "[meta]\nversion = \"1\"\n\n[options.zero_shot]\ncomponents = [\"a\", \n");
  kb::PromptOptions options = style("zero_shot");
  options.prompts_dir = scratch.path();
  CHECK(create_error(options) == file.string() + ":5:21: Error while parsing array: encountered end-of-file");

  kbtest::write_bytes(file, "[meta]\nversion = = 2\n");
  const std::string message = create_error(options);
  CHECK(message.rfind(file.string() + ":2:11: ", 0) == 0);
  MESSAGE("toml++ says: " << message);
}

TEST_CASE("problems in prompts.toml content are named with their location") {
  ScratchDir scratch;
  fs::copy(prompts_dir(), scratch.path(), fs::copy_options::recursive);
  const fs::path file = scratch.path() / "prompts.toml";
  const std::string original = kbtest::read_bytes(file);
  kb::PromptOptions options = style("one_shot");
  options.prompts_dir = scratch.path();

  SUBCASE("placeholder without a value") {
    std::string changed = original;
    changed.replace(changed.find("Model to speed up:"), 18, "Model for {gpu_name}:");
    kbtest::write_bytes(file, changed);
    CHECK(create_error(options) ==
          file.string() +
              ": prompt for option 'one_shot': placeholder {gpu_name} has no value (known: backend, "
              "backend_display, examples_entries, examples_intro, instruction, precision_display, "
              "problem_statement, ref_arch_src)");
  }
  SUBCASE("missing example file") {
    fs::remove(scratch.path() / "model_new_ex_add.py");
    // Tried against the checkout roots (the levels folder's parent and itself), then beside prompts.toml.
    const std::string relative = "src/kernelbench/prompts/model_new_ex_add.py";
    CHECK(create_error(options) == file.string() + ":24:21: example file \"" + relative +
                                       "\" (backends.cuda.one_shot_new_arch) not found; looked at " +
                                       (kbtest::data_dir().parent_path() / relative).string() + ", " +
                                       (kbtest::data_dir() / relative).string() + ", " +
                                       (scratch.path() / "model_new_ex_add.py").string());
  }
  SUBCASE("missing component") {
    std::string changed = original;
    changed.replace(changed.find("\"precision_note\", \"instruction\"]\nrequires_example = \"one_shot\""), 16,
                    "\"hardware_tips\"");
    kbtest::write_bytes(file, changed);
    CHECK(create_error(options) == file.string() + ": compose key not found: templates.hardware.hardware_tips");
  }
}

TEST_CASE("template style substitutes the files verbatim") {
  kb::PromptOptions options = style("template");
  options.template_file = prompts_dir() / "simple_one_shot.template";
  const auto builder = make(options);
  const auto rowsum = problem(1, 2);
  const std::string expected = "Task: write CUDA for the model.\n\nExample input {not a placeholder}:\n```\n" +
                               prompt_file("model_ex_add.py") + "```\nExample output:\n```\n" +
                               prompt_file("model_new_ex_add.py") + "\n```\n\nYour model:\n```\n" + rowsum.source +
                               "\n```\n   trailing spaces and no final newline -> kept";
  KB_CHECK_SAME_TEXT(expected, build(builder, rowsum));

  // Byte-exact: a CRLF source stays CRLF in a template prompt.
  kb::Problem crlf = rowsum;
  crlf.source = "a\r\nb\r\n";
  CHECK(build(builder, crlf).find("```\na\r\nb\r\n\n```") != std::string::npos);

  const auto described = nlohmann::json::parse(builder.describe());
  CHECK(described["style"] == "template");
  CHECK(described["source"] == "template");
  CHECK(described["examples"] == 1);
  REQUIRE(described["files"].size() == 3);
  CHECK(described["files"][0]["role"] == "template");
  CHECK(described["files"][0]["path"] == options.template_file.string());
  CHECK(described["files"][0]["sha256"] == dicebench::sha256_hex(prompt_file("simple_one_shot.template")));
  CHECK(described["files"][1]["role"] == "example_arch");
  CHECK(described["files"][2]["role"] == "example_new_arch");
}

TEST_CASE("template style: example files can be overridden") {
  kb::PromptOptions options = style("template");
  options.template_file = prompts_dir() / "simple_one_shot.template";
  options.example_arch = prompts_dir() / "few_shot" / "ex_scale.py";
  options.example_new_arch = prompts_dir() / "few_shot" / "ex_scale_new.py";
  const auto builder = make(options);
  const std::string prompt = build(builder, problem(1, 0));
  CHECK(prompt.find("```\n" + prompt_file("few_shot/ex_scale.py") + "```\nExample output:\n```\n" +
                    prompt_file("few_shot/ex_scale_new.py") + "\n```") != std::string::npos);
}

TEST_CASE("template style errors: unknown placeholder / no {{ARCH}} / missing files") {
  ScratchDir scratch;
  const fs::path file = scratch.path() / "t.template";
  kb::PromptOptions options = style("template");
  options.template_file = file;

  kbtest::write_bytes(file, "Solve:\n{{ARCH}}\n{ {{ not placeholders }} }\n{{GPU_NAME}}\n");
  CHECK(create_error(options) == file.string() +
                                     ":4: unknown placeholder {{GPU_NAME}} (known: {{ARCH}}, {{EXAMPLE_ARCH}}, "
                                     "{{EXAMPLE_NEW_ARCH}})");

  kbtest::write_bytes(file, "{{EXAMPLE_ARCH}} only\n");
  CHECK(create_error(options) == file.string() + ": the template has no {{ARCH}} placeholder for the problem source");

  kbtest::write_bytes(file, "{{EXAMPLE_ARCH}}\n{{ARCH}}\n");
  CHECK(create_error(options) == file.string() + " uses {{EXAMPLE_ARCH}}, but cannot read " +
                                     (scratch.path() / "model_ex_add.py").string() + ": No such file or directory");

  options.template_file = scratch.path() / "absent.template";
  CHECK(create_error(options) ==
        "cannot read " + (scratch.path() / "absent.template").string() + ": No such file or directory");

  options.template_file.clear();
  CHECK(create_error(options) == "prompt style 'template' needs a template file, and none was given");

  // A template without example placeholders needs no example files.
  kbtest::write_bytes(file, "{{{ARCH}}}");
  options.template_file = file;
  const auto builder = make(options);
  CHECK(builder.files().size() == 1);
  kb::Problem p;
  p.source = "SRC";
  CHECK(build(builder, p) == "{SRC}");
}

TEST_CASE("describe() reports the resolved settings and files") {
  const auto builder = make(style("one_shot"));
  const auto described = nlohmann::json::parse(builder.describe());
  CHECK(described["style"] == "one_shot");
  CHECK(described["source"] == "prompts.toml");
  CHECK(described["backend"] == "cuda");
  CHECK(described["precision"] == "fp32");
  CHECK(described["examples"] == 1);
  REQUIRE(described["files"].size() == 3);
  CHECK(described["files"][0]["path"] == (prompts_dir() / "prompts.toml").string());
  CHECK(described["files"][0]["sha256"] == dicebench::sha256_hex(prompt_file("prompts.toml")));
  CHECK(described["files"][1]["role"] == "example_arch");
  CHECK(described["files"][2]["role"] == "example_new_arch");
  CHECK(described["files"][2]["sha256"] == dicebench::sha256_hex(prompt_file("model_new_ex_add.py")));
}
