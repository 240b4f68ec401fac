// Integration tests over the real KernelBench problems (levels 1-3, 250 problems): loading, and
// building every prompt of every style. The data is read from $DICEBENCH_KERNELBENCH_ROOT or
// ../shared/kernelbench beside the source tree; without either, the cases are skipped.
//
// The legacy one-shot prompt (DICE's published numbers) must match KernelBench @1e1f625
// src/prompt_constructor.py::prompt_generate_custom_cuda byte for byte. The expectation is built
// here independently of PromptBuilder, by re-creating that f-string construction:
//  - legacy_one_shot.template must have the SHA-256 pinned below. That digest is of the text the
//    original function returns when called with the tokens "{{ARCH}}", "{{EXAMPLE_ARCH}}" and
//    "{{EXAMPLE_NEW_ARCH}}" as its three arguments (checked by running it when this test was
//    written), so splitting the template at the tokens yields the f-string's literal segments,
//    and the f-string's result is those segments interleaved with the arguments;
//  - for a few problems the SHA-256 of the prompt the original Python function returns is pinned.
// The prompts.toml styles are checked against pinned digests of KernelBench's own
// render_prompt_by_option output (src/kernelbench/prompt_constructor_toml.py, run on the same
// files) and structurally for all problems. No third-party text is stored in this file.
#include <doctest/doctest.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <set>

#include "benchmarks/kernelbench/backend_check.hpp"
#include "benchmarks/kernelbench/locate.hpp"
#include "benchmarks/kernelbench/problems.hpp"
#include "benchmarks/kernelbench/prompts.hpp"
#include "benchmarks/kernelbench/text_mode.hpp"
#include "core/base/sha256.hpp"
#include "core/base/whole_file.hpp"
#include "tests/benchmarks/kernelbench/test_support.hpp"

namespace kb = dicebench::kernelbench;
namespace fs = std::filesystem;

namespace {

// The snapshot in ../shared/kernelbench (KernelBench @423217d): digest over
// "level<L>/<file name> sha256:<hex>\n" for levels 1-3 in id order.
constexpr const char* kSnapshotDigest = "ea122045d0b0ae52f2d7aa4fbaa32ca3f0b88955c0ba8c49f879dfd2319a7d6a";
constexpr const char* kLegacyTemplateSha = "f1f7d2c34ca2dd33898b7f3662a60dfb5eb7ae8c089966fb49639a5f7d1f5db5";
constexpr const char* kPromptsTomlSha = "ad4f0959572474f152e7aba71cc65d7c2ad93dbdcc2638f8ec80f9f67e824956";
constexpr const char* kExampleArchSha = "39d81d430838294b3e705b105d7dfd57d90888b7b449426510c621e6f9035c5d";
constexpr const char* kExampleNewArchSha = "6b5b3805953a590b0b0d635b84663caf573d1e38f9522898598fd05644b451e4";

struct Root {
  fs::path given;
  bool shared_snapshot;  // the ../shared/kernelbench copy, whose contents are pinned
};

std::optional<Root> real_root() {
  std::error_code ec;
  if (const char* env = std::getenv("DICEBENCH_KERNELBENCH_ROOT"); env != nullptr && *env != '\0') {
    if (fs::exists(env, ec)) return Root{env, false};
  }
  const fs::path shared = fs::path(DICEBENCH_SOURCE_DIR).parent_path() / "shared" / "kernelbench";
  if (fs::exists(shared, ec)) return Root{shared, true};
  return std::nullopt;
}

#define KB_REQUIRE_REAL_ROOT(levels_root, root)                                                                   \
  const std::optional<Root> root = real_root();                                                                   \
  if (!root) {                                                                                                    \
    MESSAGE("skipped: no KernelBench data (neither $DICEBENCH_KERNELBENCH_ROOT nor "                              \
            << (fs::path(DICEBENCH_SOURCE_DIR).parent_path() / "shared" / "kernelbench").string() << " exists)"); \
    return;                                                                                                       \
  }                                                                                                               \
  auto levels_root##_found = kb::locate_levels_root(root->given.string());                                        \
  REQUIRE_MESSAGE(levels_root##_found.ok(), levels_root##_found.error().message);                                 \
  const fs::path levels_root = levels_root##_found.value()

std::vector<kb::Problem> load_all(const fs::path& levels_root) {
  std::vector<kb::Problem> all;
  for (int level = 1; level <= 3; ++level) {
    auto problems = kb::load_level(levels_root, level);
    REQUIRE_MESSAGE(problems.ok(), (problems.ok() ? "" : problems.error().message));
    all.insert(all.end(), problems->begin(), problems->end());
  }
  return all;
}

kb::PromptBuilder make(const kb::PromptOptions& options, const fs::path& levels_root) {
  auto builder = kb::PromptBuilder::create(options, levels_root);
  REQUIRE_MESSAGE(builder.ok(), (builder.ok() ? "" : builder.error().message));
  return std::move(builder).value();
}

std::string rstrip_newlines_and_spaces(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

const kb::Problem* find(const std::vector<kb::Problem>& all, int level, const std::string& file_name) {
  for (const auto& p : all) {
    if (p.level == level && p.path.filename() == file_name) return &p;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("all 250 KernelBench problems load: 100/100/50 with unique ids and stable hashes") {
  KB_REQUIRE_REAL_ROOT(levels_root, root);
  std::map<int, std::size_t> counts;
  std::string listing;
  for (int level = 1; level <= 3; ++level) {
    auto problems = kb::load_level(levels_root, level);
    REQUIRE_MESSAGE(problems.ok(), (problems.ok() ? "" : problems.error().message));
    counts[level] = problems->size();
    std::set<std::int64_t> ids;
    std::int64_t previous = 0;
    for (const auto& p : problems.value()) {
      CHECK(ids.insert(p.id).second);
      CHECK(p.id > previous);
      previous = p.id;
      CHECK(p.level == level);
      CHECK(p.path.filename().string() == std::to_string(p.id) + "_" + p.name + ".py");
      // The hash is of the bytes on disk, read here independently.
      CHECK(p.content_hash == "sha256:" + dicebench::sha256_hex(kbtest::read_bytes(p.path)));
      listing += "level" + std::to_string(level) + "/" + p.path.filename().string() + " " + p.content_hash + "\n";
    }
    // Loading again gives the same problems and hashes.
    auto again = kb::load_level(levels_root, level);
    REQUIRE(again.ok());
    REQUIRE(again->size() == problems->size());
    for (std::size_t i = 0; i < again->size(); ++i) {
      CHECK(again->at(i).content_hash == problems->at(i).content_hash);
      CHECK(again->at(i).id == problems->at(i).id);
    }
  }
  CHECK(counts[1] == 100);
  CHECK(counts[2] == 100);
  CHECK(counts[3] == 50);
  if (root->shared_snapshot) {
    CHECK(dicebench::sha256_hex(listing) == kSnapshotDigest);
  } else {
    MESSAGE("not the pinned snapshot; snapshot digest not compared (got " << dicebench::sha256_hex(listing) << ")");
  }
  std::error_code ec;
  if (!fs::is_directory(levels_root / "level4", ec)) {
    auto level4 = kb::load_level(levels_root, 4);
    REQUIRE_FALSE(level4.ok());
    CHECK(level4.error().message == "no level4 folder under " + levels_root.string());
  }
}

TEST_CASE("the legacy one-shot template reproduces KernelBench@1e1f625 prompt_generate_custom_cuda") {
  KB_REQUIRE_REAL_ROOT(levels_root, root);
  const fs::path template_file = levels_root / "prompts" / "legacy_one_shot.template";
  std::error_code ec;
  if (!fs::is_regular_file(template_file, ec)) {
    MESSAGE("skipped: " << template_file.string() << " does not exist (it ships with ../shared/kernelbench)");
    return;
  }
  const std::string text = kbtest::read_bytes(template_file);
  REQUIRE(dicebench::sha256_hex(text) == kLegacyTemplateSha);

  // The f-string's literal segments: before {example_arch_src}, between the examples, before
  // {arc_src}, after it.
  const std::size_t a = text.find("{{EXAMPLE_ARCH}}");
  const std::size_t b = text.find("{{EXAMPLE_NEW_ARCH}}");
  const std::size_t c = text.find("{{ARCH}}");
  REQUIRE(a != std::string::npos);
  REQUIRE(b != std::string::npos);
  REQUIRE(c != std::string::npos);
  REQUIRE(a < b);
  REQUIRE(b < c);
  const std::string s0 = text.substr(0, a);
  const std::string s1 = text.substr(a + 16, b - a - 16);
  const std::string s2 = text.substr(b + 20, c - b - 20);
  const std::string s3 = text.substr(c + 8);
  // The layout of the original f-strings: arguments sit on their own lines, indented 8 spaces
  // (example block) and 4 spaces (architecture block), and each is followed by a fence line.
  CHECK(s0.substr(s0.size() - 14) == "``` \n\n        ");
  CHECK(s1.substr(0, 12) == "\n        ```");
  CHECK(s1.substr(s1.size() - 12) == "```\n        ");
  CHECK(s2.substr(s2.size() - 8) == "```\n    ");
  CHECK(s3.substr(0, 8) == "\n    ```");
  CHECK(s3.substr(s3.size() - 2) == "\n\n");

  const std::string example_arch = kbtest::read_bytes(levels_root / "prompts" / "model_ex_add.py");
  const std::string example_new_arch = kbtest::read_bytes(levels_root / "prompts" / "model_new_ex_add.py");
  CHECK(dicebench::sha256_hex(example_arch) == kExampleArchSha);
  CHECK(dicebench::sha256_hex(example_new_arch) == kExampleNewArchSha);

  kb::PromptOptions options;
  options.style = "template";
  options.template_file = template_file;
  const auto builder = make(options, levels_root);
  const auto all = load_all(levels_root);
  for (const auto& p : all) {
    const std::string expected = s0 + example_arch + s1 + example_new_arch + s2 + p.source + s3;
    auto prompt = builder.build(p);
    REQUIRE(prompt.ok());
    const std::string difference = kbtest::first_difference(expected, prompt.value());
    CHECK_MESSAGE(difference.empty(), p.path.string() << ": " << difference);
  }

  // SHA-256 of what the original Python function returns for these problems (run on the
  // pinned snapshot's files with the example pair above).
  const std::map<std::pair<int, std::string>, std::pair<const char*, const char*>> pinned = {
      {{1, "1_Square_matrix_multiplication_.py"},
       {"7626d611b8f2c97a71ae40d731da8cb7ba067dc43cc2f3e8185ad85c68533f30",
        "f461abe54c35d15923955c0b750028dc9da519162f4a8bcc845d0cf3ddf9d210"}},
      {{2, "1_Conv2D_ReLU_BiasAdd.py"},
       {"45ee3a3db038396c982207b36812086bf1b94472ebbf229c5e76c5ea0b90f89f",
        "7bcc0fc70ad64787d15d7e14d5abd27e7852d9c71849b9e96fd4f86c472aa2de"}},
      {{3, "1_MLP.py"},
       {"3fabb8e6bb6f0f5a9524a62226ce25fc3a8f5289464e809a29a85919536c4efc",
        "27f30259c4bfde7fb57a7464d90a0481e2e134d508f105fb204622a362ed7c86"}},
      {{1, "100_HingeLoss.py"},
       {"8e7ab261247e266e1b765957db04ea6972ac5dc9544607c059848d2417d5d3a1",
        "0075a6796b18eba0fb182583267aef22d3ce02e2fe4d94a732378c83001b71fa"}},
  };
  int compared = 0;
  for (const auto& [key, hashes] : pinned) {
    const kb::Problem* p = find(all, key.first, key.second);
    REQUIRE(p != nullptr);
    if (p->content_hash != std::string("sha256:") + hashes.first) {
      MESSAGE(p->path.string() << " differs from the pinned snapshot; its pinned prompt digest is not compared");
      continue;
    }
    auto prompt = builder.build(*p);
    REQUIRE(prompt.ok());
    CHECK_MESSAGE(dicebench::sha256_hex(prompt.value()) == hashes.second, p->path.string());
    ++compared;
  }
  if (root->shared_snapshot) CHECK(compared == 4);
}

TEST_CASE("prompts.toml prompts match KernelBench's render_prompt_by_option for the pinned snapshot") {
  KB_REQUIRE_REAL_ROOT(levels_root, root);
  kb::PromptOptions probe;
  auto probe_builder = kb::PromptBuilder::create(probe, levels_root);
  if (!probe_builder.ok()) {
    MESSAGE("skipped: " << probe_builder.error().message);
    return;
  }
  const auto& files = probe_builder->files();
  REQUIRE(files.size() == 3);
  if (files[0].sha256 != kPromptsTomlSha || files[1].sha256 != kExampleArchSha ||
      files[2].sha256 != kExampleNewArchSha) {
    MESSAGE("skipped: prompts.toml or its example pair differ from the pinned snapshot");
    return;
  }
  const auto all = load_all(levels_root);
  // file, option, precision, backend -> SHA-256 of KernelBench's get_prompt_for_backend(src, backend, option,
  // precision). The backends without few_shot_examples fall back to their one-shot pair, as KernelBench does.
  struct Pin {
    int level;
    const char* file;
    const char* option;
    const char* precision;
    const char* sha;
    const char* backend = "cuda";
  };
  const Pin pins[] = {
      {1, "1_Square_matrix_multiplication_.py", "zero_shot", "fp32",
       "135684b9899740f1818195476a1695bfef0a67caa6ce3ac2705177d75303f9b6"},
      {1, "1_Square_matrix_multiplication_.py", "zero_shot", "bf16",
       "acdc63848e35adb6ee3cf911bcd0b2722f827c16ba1f615f5bf1dd7f3a95523f"},
      {1, "1_Square_matrix_multiplication_.py", "one_shot", "fp32",
       "0cf638034a22fb88c3d35bc41e25cb47bb4d6639d0e47bc860c8333a58a16e8c"},
      {1, "1_Square_matrix_multiplication_.py", "one_shot", "bf16",
       "3de59b381bdc3b6b8aef424e8b13efde0e317c7a46fc0299654838908b784013"},
      {2, "1_Conv2D_ReLU_BiasAdd.py", "zero_shot", "fp32",
       "ad6ad581bd629b7437947e99b7001b79dded5b4218d7802ce889a7f055698635"},
      {2, "1_Conv2D_ReLU_BiasAdd.py", "one_shot", "fp32",
       "34b48a4e75f039a8ff1c37a88df271fb715199b5f8e8914ac772019b3d53b8b8"},
      {2, "1_Conv2D_ReLU_BiasAdd.py", "one_shot", "bf16",
       "04fe04a94ccd4a6259c42def9d39e6528397ef87648d695734a00bfaa13b50c8"},
      {3, "1_MLP.py", "zero_shot", "fp32", "48ca5ff07e6c7191b16e812bdb1e74e8fd8c0efc0e02f1a9fa1087d4c2a3f9bb"},
      {3, "1_MLP.py", "one_shot", "fp32", "ee28bdec36c826a2b8b83b68ad6dcc2cdae34dd4b4d200c3a0948731e826a62e"},
      {1, "12_Matmul_with_diagonal_matrices_.py", "zero_shot", "fp32",
       "78645341b98d2835b8e9727a79d14bc9b6cbef468ed03be1ed21d019e5bf566e"},
      {1, "12_Matmul_with_diagonal_matrices_.py", "one_shot", "fp32",
       "0a6703b2e68860ac3b405d6caba9771b915882a0252550e03a7b0b48525a9139"},
      {1, "12_Matmul_with_diagonal_matrices_.py", "one_shot", "bf16",
       "0cd714e356ea2a6f8803d56fb44bb9c384481ae655b524673f9977f7bfd111c8"},
      {1, "1_Square_matrix_multiplication_.py", "zero_shot", "fp32",
       "1d94efb5a8b5dd6714126c5e78c0ae695a0bf5df1d787611ce848dcb6bef3f51", "triton"},
      {1, "1_Square_matrix_multiplication_.py", "one_shot", "fp32",
       "e03706de286a55f0fd60468b56adcc7ad8b097890677cebf31c15ddf3010eb30", "triton"},
      {1, "1_Square_matrix_multiplication_.py", "few_shot", "fp32",
       "e03706de286a55f0fd60468b56adcc7ad8b097890677cebf31c15ddf3010eb30", "triton"},
      {1, "1_Square_matrix_multiplication_.py", "zero_shot", "fp32",
       "90b5c05e27c02fbc2814ea5161fa21dff62506992009bb15b06049748e40fd46", "cute"},
      {1, "1_Square_matrix_multiplication_.py", "one_shot", "fp32",
       "2143d649c12d8011e0085de0c444ded1719ccb2934a381a17a5cfaf914c5740c", "cute"},
      {1, "1_Square_matrix_multiplication_.py", "few_shot", "fp32",
       "2143d649c12d8011e0085de0c444ded1719ccb2934a381a17a5cfaf914c5740c", "cute"},
      {1, "1_Square_matrix_multiplication_.py", "zero_shot", "fp32",
       "b5fd1c63bb4023fe5e708f4928d4ff2059d2797cfe9aff74f7553c8baa589aa7", "tilelang"},
      {1, "1_Square_matrix_multiplication_.py", "one_shot", "fp32",
       "ddc0242af37d2806922db3ae32b69f9ee983c05faf0f0083ced5a307af101449", "tilelang"},
      {1, "1_Square_matrix_multiplication_.py", "few_shot", "fp32",
       "ddc0242af37d2806922db3ae32b69f9ee983c05faf0f0083ced5a307af101449", "tilelang"},
      {2, "1_Conv2D_ReLU_BiasAdd.py", "one_shot", "bf16",
       "61d0ca9eca8fe4a999cb08aaba8f68a01f28fa3a31c51241fe549ec6d82c4d89", "triton"},
      {2, "1_Conv2D_ReLU_BiasAdd.py", "one_shot", "bf16",
       "87c47d84d457af7bf8637b568d88b32c63bdab5d0e70e378b1360f97e74a4a01", "cute"},
      {2, "1_Conv2D_ReLU_BiasAdd.py", "one_shot", "bf16",
       "6c4a986a33dcfd9d64e624fcca49a0a73b0fd0615bbd5fd5bd9bed37056f6249", "tilelang"},
      {3, "1_MLP.py", "few_shot", "fp16", "223c869da9538c92c8e9a9421acc944fd090006d45fb18d19b9926fbbca3b850", "triton"},
      {3, "1_MLP.py", "few_shot", "fp16", "9e76dab0331599383524ba897ffc4f7bd1f4fbd92c988180cbaa4a3f48b56db0", "cute"},
      {3, "1_MLP.py", "few_shot", "fp16", "56947873b0bb402bf61f0ce041ba127e7f3da399593e6c746876aed368d8a874",
       "tilelang"},
      {1, "1_Square_matrix_multiplication_.py", "few_shot", "fp32",
       "897b32ce72527b25497742d0d54180188ab350831a0beeed95c8990a009ee401", "cuda"},
      {2, "1_Conv2D_ReLU_BiasAdd.py", "few_shot", "bf16",
       "e3771e3540a316ce958745fedaecbdfecc75c2885e40d50ec646c0d8c0d6fdee", "cuda"},
  };
  for (const Pin& pin : pins) {
    const kb::Problem* p = find(all, pin.level, pin.file);
    REQUIRE(p != nullptr);
    kb::PromptOptions options;
    options.style = pin.option;
    options.precision = pin.precision;
    options.backend = pin.backend;
    const auto builder = make(options, levels_root);
    auto prompt = builder.build(*p);
    REQUIRE(prompt.ok());
    CHECK_MESSAGE(dicebench::sha256_hex(prompt.value()) == pin.sha,
                  pin.file << " " << pin.backend << " " << pin.option << " " << pin.precision);
  }
}

TEST_CASE("every prompt of every style builds for all 250 problems") {
  KB_REQUIRE_REAL_ROOT(levels_root, root);
  const auto all = load_all(levels_root);
  REQUIRE(all.size() == 250);

  // prompts.toml styles.
  kb::PromptOptions probe;
  auto probe_builder = kb::PromptBuilder::create(probe, levels_root);
  if (!probe_builder.ok()) {
    MESSAGE("prompts.toml styles skipped: " << probe_builder.error().message);
  } else {
    const fs::path toml_file = probe_builder->files()[0].path;
    const std::string toml_text = kbtest::read_bytes(toml_file);
    // The fp32 precision_display value, read naively from the file's text.
    const std::size_t table = toml_text.find("[precision.fp32]");
    REQUIRE(table != std::string::npos);
    const std::size_t key = toml_text.find("precision_display = \"", table);
    REQUIRE(key != std::string::npos);
    const std::size_t value_start = key + 21;
    const std::string precision_display = toml_text.substr(value_start, toml_text.find('"', value_start) - value_start);
    const std::string example_arch = kb::universal_newlines(kbtest::read_bytes(probe_builder->files()[1].path));
    const std::string example_new_arch =
        rstrip_newlines_and_spaces(kb::universal_newlines(kbtest::read_bytes(probe_builder->files()[2].path)));

    for (const char* style : {"zero_shot", "one_shot"}) {
      kb::PromptOptions options;
      options.style = style;
      const auto builder = make(options, levels_root);
      const bool examples = std::string(style) == "one_shot";
      int built = 0;
      for (const auto& p : all) {
        auto prompt = builder.build(p);
        REQUIRE_MESSAGE(prompt.ok(), (prompt.ok() ? "" : prompt.error().message));
        const std::string& text = prompt.value();
        INFO(style << " " << p.path.string());
        CHECK(!text.empty());
        CHECK(text.front() != '\n');
        CHECK(text.front() != ' ');
        CHECK(text.back() == '\n');
        CHECK(text.substr(text.size() - 2) != "\n\n");
        const std::size_t source_at = text.find(p.source);
        const std::size_t precision_at = text.find(precision_display);
        CHECK(source_at != std::string::npos);
        CHECK(precision_at != std::string::npos);
        CHECK(source_at < precision_at);
        if (examples) {
          const std::size_t arch_at = text.find(example_arch);
          const std::size_t new_arch_at = text.find(example_new_arch);
          CHECK(arch_at != std::string::npos);
          CHECK(new_arch_at != std::string::npos);
          CHECK(arch_at < new_arch_at);
          CHECK(new_arch_at < source_at);
        } else {
          CHECK(text.find(example_new_arch) == std::string::npos);
        }
        ++built;
      }
      CHECK(built == 250);
    }

    // few_shot needs the few_shot/ example files of a full KernelBench checkout.
    kb::PromptOptions few;
    few.style = "few_shot";
    auto few_builder = kb::PromptBuilder::create(few, levels_root);
    if (few_builder.ok()) {
      for (const auto& p : all) {
        auto prompt = few_builder->build(p);
        REQUIRE_MESSAGE(prompt.ok(), (prompt.ok() ? "" : prompt.error().message));
        CHECK(prompt->find(p.source) != std::string::npos);
      }
    } else {
      CHECK(few_builder.error().message.find("backends.cuda.few_shot_examples") != std::string::npos);
      MESSAGE("few_shot not built (expected where the few_shot/ example files are absent): "
              << few_builder.error().message);
    }
  }

  // The template style.
  const fs::path template_file = levels_root / "prompts" / "legacy_one_shot.template";
  std::error_code ec;
  if (!fs::is_regular_file(template_file, ec)) {
    MESSAGE("template style skipped: " << template_file.string() << " does not exist");
    return;
  }
  kb::PromptOptions options;
  options.style = "template";
  options.template_file = template_file;
  const auto builder = make(options, levels_root);
  for (const auto& p : all) {
    auto prompt = builder.build(p);
    REQUIRE(prompt.ok());
    CHECK(prompt->find(p.source) != std::string::npos);
  }
}

TEST_CASE("KernelBench's own example kernels pass the backend check of their language") {
  KB_REQUIRE_REAL_ROOT(levels_root, root);
  // The prompts folder holds prompts.toml and each backend's example answer (model_new_ex_add_*.py).
  fs::path prompts;
  for (const fs::path& candidate : {levels_root / "prompts", levels_root.parent_path() / "prompts",
                                    levels_root / "src" / "kernelbench" / "prompts"})
    if (fs::exists(candidate / "prompts.toml")) prompts = candidate;
  if (prompts.empty()) {
    MESSAGE("skipped: no prompts folder beside " << levels_root.string());
    return;
  }
  const std::map<std::string, std::vector<std::string>> examples = {
      {"cuda",
       {"model_new_ex_add.py", "few_shot/model_new_ex_add.py", "few_shot/model_new_ex_fuse_gelu.py",
        "few_shot/model_new_ex_tiled_matmul.py", "few_shot/model_new_ex_flash_attn.py"}},
      {"triton", {"model_new_ex_add_triton.py"}},
      {"cute", {"model_new_ex_add_cute.py"}},
      {"tilelang", {"model_new_ex_add_tilelang.py"}},
  };
  for (const auto& [backend, files] : examples)
    for (const auto& file : files) {
      const auto source = dicebench::read_whole_file(prompts / file);
      REQUIRE_MESSAGE(source.ok(), (prompts / file).string());
      const auto why = kb::backend_unused(*kb::find_backend(backend), *source);
      CHECK_MESSAGE(!why.has_value(), backend << " " << file << ": " << why.value_or(""));
      // ... and a CUDA example is not Triton, nor the other way round.
      const std::string other = backend == "triton" ? "cuda" : "triton";
      CHECK_MESSAGE(kb::backend_unused(*kb::find_backend(other), *source).has_value(), other << " " << file);
    }
}
