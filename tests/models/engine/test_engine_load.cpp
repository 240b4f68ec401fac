// Engine::load on the CPU: weights that disagree with config.json, missing tensors and bad
// prompts are errors naming the file and tensor; a valid folder generates.
#include <doctest/doctest.h>

#include "models/engine/engine.hpp"
#include "tests/models/engine/safetensors_writer.hpp"

using namespace dicebench::engine;
using namespace dicebench::engine::testing;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string load_error(const std::string& name, const nlohmann::json& config,
                       const std::map<std::string, TensorSpec>& tensors) {
  const auto folder = write_model_folder(name, config, tensors);
  const auto engine = Engine::load(folder, {});
  REQUIRE_FALSE(engine.ok());
  CHECK(contains(engine.error().message, folder.string()));
  return engine.error().message;
}

}  // namespace

TEST_CASE("a valid folder loads and generates on the CPU") {
  const auto folder = write_model_folder("valid", tiny_config(), tiny_tensors());
  auto engine = Engine::load(folder, {});
  REQUIRE_MESSAGE(engine.ok(), engine.error().message);
  CHECK((*engine)->device() == "cpu");
  CHECK((*engine)->dtype() == DType::float32);
  DecodeSettings settings;
  settings.max_new_tokens = 5;
  settings.sampling.temperature = 0;
  GenerationStatistics statistics;
  const auto generated = (*engine)->generate({{1, 2, 3}, {4}}, settings, &statistics);
  REQUIRE_MESSAGE(generated.ok(), generated.error().message);
  CHECK((*generated)[0].tokens.size() == 5);
  CHECK((*generated)[1].tokens.size() == 5);
  CHECK(statistics.forward_passes == 5);  // prefill, then one pass per further token
  CHECK(statistics.generated_tokens == 10);

  // Sampling with a seed repeats itself.
  settings.sampling = {0.9, 8, 0.95};
  settings.seed = 7;
  const auto first = (*engine)->generate({{1, 2, 3}}, settings);
  const auto again = (*engine)->generate({{1, 2, 3}}, settings);
  REQUIRE_MESSAGE(first.ok(), first.error().message);
  REQUIRE_MESSAGE(again.ok(), again.error().message);
  CHECK((*first)[0].tokens == (*again)[0].tokens);

  const auto long_prompt = (*engine)->generate({std::vector<int64_t>(62, 1)}, settings);
  REQUIRE_FALSE(long_prompt.ok());
  CHECK(contains(long_prompt.error().message, "exceeds the model's context of 64"));
  const auto bad_token = (*engine)->generate({{1, 16}}, settings);
  REQUIRE_FALSE(bad_token.ok());
  CHECK(contains(bad_token.error().message, "token id 16 is outside the vocabulary"));
  settings.mode = DecodeMode::block_diffusion;
  const auto no_mask = (*engine)->generate({{1}}, settings);
  REQUIRE_FALSE(no_mask.ok());
  CHECK(contains(no_mask.error().message, "needs a mask token"));
  settings.mask_token_id = 15;  // given by the caller: the folder's config.json has none
  settings.max_new_tokens = 6;
  GenerationStatistics diffusion;
  const auto with_mask = (*engine)->generate({{1, 2}}, settings, &diffusion);
  REQUIRE_MESSAGE(with_mask.ok(), with_mask.error().message);
  CHECK((*with_mask)[0].tokens.size() == 6);

  // Every logit of this model is equal, so argmax is id 0: as the mask token it must not be drawn
  // (else the block would never lose its masks), and the next id wins.
  settings.mask_token_id = 0;
  settings.sampling = {0.0, 0, 1.0};
  const auto mask_first = (*engine)->generate({{1, 2}}, settings);
  REQUIRE_MESSAGE(mask_first.ok(), mask_first.error().message);
  CHECK((*mask_first)[0].tokens == std::vector<int64_t>(6, 1));
}

TEST_CASE("infilling needs block diffusion and checks its rows, and works without before or after") {
  const auto folder = write_model_folder("infill", tiny_config(), tiny_tensors());
  auto engine = Engine::load(folder, {});
  REQUIRE_MESSAGE(engine.ok(), engine.error().message);
  const auto infill_error = [&](const std::vector<InfillRow>& rows, const DecodeSettings& settings) {
    const auto filled = (*engine)->infill(rows, settings);
    REQUIRE_FALSE(filled.ok());
    return filled.error().message;
  };
  DecodeSettings settings;
  const std::vector<InfillRow> rows{{{1, 2, 3}, {4, 5}, 5}, {{}, {6}, 3}, {{7, 8, 9, 10, 11}, {}, 4}};
  CHECK(contains(infill_error(rows, settings),
                 "native infilling needs block diffusion: the settings decode autoregressively"));
  settings.mode = DecodeMode::block_diffusion;
  CHECK(contains(infill_error(rows, settings), "native infilling needs block diffusion, and so a mask token"));
  settings.mask_token_id = 15;  // the folder's config.json has none

  CHECK(contains(infill_error({rows[0], {{1}, {2}, 0}}, settings),
                 "infill row 1: span_tokens must be at least 1, got 0"));
  CHECK(contains(infill_error({{{}, {}, 4}}, settings), "infill row 0: before and after are both empty"));
  CHECK(contains(infill_error({{{1}, {2, 16}, 4}}, settings),
                 "infill row 0 (after): token id 16 is outside the vocabulary"));
  CHECK(contains(infill_error({}, settings), "no infill rows given"));
  // 30 + 30 tokens and a span of 5, rounded up to 8 (two blocks of 4): 68 positions of 64.
  CHECK(contains(
      infill_error({{std::vector<int64_t>(30, 1), std::vector<int64_t>(30, 2), 5}}, settings),
      "infill row 0: 30 tokens before, 30 after and a span of 8 (whole blocks) exceed the model's context of 64"));

  // Spans cut to span_tokens, not to whole blocks; no stop token, so none stopped.
  GenerationStatistics statistics;
  const auto filled = (*engine)->infill(rows, settings, &statistics);
  REQUIRE_MESSAGE(filled.ok(), filled.error().message);
  for (size_t row = 0; row < rows.size(); ++row) {
    INFO("row " << row);
    CHECK((*filled)[row].tokens.size() == static_cast<size_t>(rows[row].span_tokens));
    CHECK_FALSE((*filled)[row].stopped);
  }
  CHECK(statistics.generated_tokens == 5 + 3 + 4);
  CHECK(statistics.prefilled_tokens == 3 * 8);  // contexts of 5, 1 and 5 tokens: two blocks of 4 per row
}

TEST_CASE("weights that disagree with config.json are errors naming file and tensor") {
  auto tensors = tiny_tensors();
  tensors["model.layers.0.self_attn.k_proj.weight"].shape = {8, 8};
  CHECK(contains(load_error("shape", tiny_config(), tensors),
                 "tensor 'model.layers.0.self_attn.k_proj.weight' has shape [8, 8] but config.json implies [4, 8]"));

  tensors = tiny_tensors();
  tensors["model.norm.weight"].dtype = "BF16";
  CHECK(contains(load_error("dtype", tiny_config(), tensors),
                 "tensor 'model.norm.weight' is BF16 but config.json says torch_dtype float32"));

  tensors = tiny_tensors();
  tensors["model.norm.weight"].dtype = "I64";
  auto config = tiny_config();
  config.erase("torch_dtype");
  CHECK(contains(load_error("integer", config, tensors), "tensor 'model.norm.weight' has dtype I64"));

  tensors = tiny_tensors();
  tensors.erase("model.layers.0.mlp.up_proj.weight");
  CHECK(contains(load_error("missing", tiny_config(), tensors),
                 "model.safetensors: missing tensor 'model.layers.0.mlp.up_proj.weight'"));

  config = tiny_config();
  config["tie_word_embeddings"] = false;  // now lm_head.weight is needed
  CHECK(contains(load_error("untied", config, tiny_tensors()), "missing tensor 'lm_head.weight'"));
  tensors = tiny_tensors();
  tensors["lm_head.weight"] = {"F32", {16, 8}};
  const auto folder = write_model_folder("untied-ok", config, tensors);
  CHECK(Engine::load(folder, {}).ok());

  const auto bad_device = Engine::load(folder, {"tpu", {}});
  REQUIRE_FALSE(bad_device.ok());
}
