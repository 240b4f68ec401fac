// The engine against independent references (make_references.py, run once as this test's
// fixture): transformers' Qwen3ForCausalLM logits (causal, and block-causal through the
// equivalent 4-D mask), its greedy generate() over 128 tokens, and the plain Python block-diffusion
// decoder of block_diffusion_reference.py (generation and infilling). Built twice: CPU/fp32 (max relative error 1e-4)
// and, with DICEBENCH_FIDELITY_GPU, CUDA/bf16 with bf16 tolerances, where DICE-8B's real shapes are checked too when
// $DICEBENCH_DICE8B_FOLDER names such a folder.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/base/text.hpp"
#include "core/base/whole_file.hpp"
#include "models/engine/engine.hpp"
#include "models/engine/safetensors_file.hpp"

using namespace dicebench;
using namespace dicebench::engine;
namespace fs = std::filesystem;

namespace {

#ifdef DICEBENCH_FIDELITY_GPU
constexpr const char* kFolder = "engine-fidelity-gpu";
constexpr const char* kDevice = "cuda";
constexpr DType kDType = DType::bfloat16;
constexpr double kLogitTolerance = 3e-2;
#else
constexpr const char* kFolder = "engine-fidelity";
constexpr const char* kDevice = "cpu";
constexpr DType kDType = DType::float32;
constexpr double kLogitTolerance = 1e-4;
#endif

struct Fixture {
  fs::path folder;
  nlohmann::json references;
  std::unique_ptr<Engine> engine;
};

Fixture open(const std::string& model) {
  Fixture fixture;
  fixture.folder = fs::path(DICEBENCH_BUILD_DIR) / "tests" / kFolder / model;
  const auto text = read_whole_file(fixture.folder / "references.json");
  REQUIRE_MESSAGE(text.ok(),
                  "no references (run the fixture make_references.py): " << (text.ok() ? "" : text.error().message));
  fixture.references = nlohmann::json::parse(*text);
  // The DICE-8B references name a model folder elsewhere; the small models sit beside theirs.
  auto engine = Engine::load(fixture.references.value("model_folder", fixture.folder.string()), {kDevice, kDType});
  REQUIRE_MESSAGE(engine.ok(), engine.error().message);
  fixture.engine = std::move(*engine);
  return fixture;
}

std::vector<std::vector<int64_t>> rows_of(const nlohmann::json& json) {
  return json.get<std::vector<std::vector<int64_t>>>();
}

// The fixture's model again, its prompts prefilled a few columns per pass (several chunks).
std::unique_ptr<Engine> chunked_prefill(const Fixture& fixture) {
  EngineOptions options{kDevice, kDType};
  options.prefill_chunk_tokens = 8;
  auto engine = Engine::load(fixture.folder, options);
  REQUIRE_MESSAGE(engine.ok(), engine.error().message);
  return std::move(*engine);
}

// max |engine - reference| / max |reference| over each row's logits, all rows at once (batched).
void check_logits(Fixture& fixture) {
  const auto expected = SafetensorsFile::open(fixture.folder / "logits.safetensors");
  REQUIRE_MESSAGE(expected.ok(), expected.error().message);
  for (const auto& group : fixture.references["logits"]) {
    const auto name = group["name"].get<std::string>();
    const auto rows = rows_of(group["rows"]);
    const auto logits = fixture.engine->logits(rows, group["block_length"].get<int64_t>());
    REQUIRE_MESSAGE(logits.ok(), logits.error().message);
    for (size_t row = 0; row < rows.size(); ++row) {
      const auto* reference = expected->find(name + "." + std::to_string(row));
      REQUIRE(reference);
      REQUIRE(reference->data.size() == (*logits)[row].size() * sizeof(float));
      const auto* want = reinterpret_cast<const float*>(reference->data.data());
      double largest = 0, worst = 0;
      for (size_t i = 0; i < (*logits)[row].size(); ++i) {
        largest = std::max(largest, std::abs(static_cast<double>(want[i])));
        worst = std::max(worst, std::abs(static_cast<double>((*logits)[row][i]) - want[i]));
      }
      MESSAGE(fixture.folder.filename().string() << " " << name << " row " << row << ": max abs error " << worst
                                                 << ", max |logit| " << largest << ", relative " << worst / largest);
      CHECK(worst / largest <= kLogitTolerance);
    }
  }
}

}  // namespace

TEST_CASE("logits match transformers: causal, single file and sharded (batched, left-padded)") {
  for (const char* model : {"qwen3", "qwen3-sharded"}) {
    auto fixture = open(model);
    check_logits(fixture);
  }
}

TEST_CASE("logits match transformers: SDAR's block-causal mask and untied lm_head") {
  auto fixture = open("sdar");
  check_logits(fixture);
}

#ifdef DICEBENCH_FIDELITY_GPU
TEST_CASE("logits match transformers on DICE-8B's shapes (a folder named by $DICEBENCH_DICE8B_FOLDER)") {
  if (!fs::exists(fs::path(DICEBENCH_BUILD_DIR) / "tests" / kFolder / "dice-8b" / "references.json")) {
    MESSAGE("no DICE-8B references: set DICEBENCH_DICE8B_FOLDER to a folder from make_model.py --shape dice-8b");
    return;
  }
  auto fixture = open("dice-8b");
  check_logits(fixture);
}

TEST_CASE("decoding passes replayed as CUDA graphs give the tokens of passes launched one by one") {
  auto fixture = open("sdar");  // the graphs are on by default
  auto eager = Engine::load(fixture.folder, {kDevice, kDType, /*cuda_graphs=*/false});
  REQUIRE_MESSAGE(eager.ok(), eager.error().message);
  // Left-padded rows of different lengths; 300 new tokens cross a key bucket (256 columns).
  const TokenRows prompts{{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {12, 13, 14}, {15, 16, 17, 18, 19, 20, 21}};
  DecodeSettings greedy;
  greedy.sampling.temperature = 0;
  greedy.max_new_tokens = 300;
  auto paper = decode_preset("paper", fixture.engine->config(), fixture.engine->generation_config());
  REQUIRE(paper.ok());
  paper->settings.max_new_tokens = 300;
  auto dynamic = paper->settings;  // sampled, several commits per pass
  dynamic.remasking = Remasking::low_confidence_dynamic;
  dynamic.confidence = ConfidenceSource::unfiltered;
  dynamic.confidence_threshold = 0.5;
  dynamic.sampling = {0.7, 0, 0.95};
  dynamic.seed = 7;
  // The same tokens and passes from the graphs' engine and the eager one; `lengths[row]` tokens each.
  const auto same = [&](const std::string& what, const auto& call, const std::vector<size_t>& lengths) {
    GenerationStatistics graph_statistics, eager_statistics;
    const auto replayed = call(*fixture.engine, graph_statistics);
    const auto launched = call(**eager, eager_statistics);
    REQUIRE_MESSAGE(replayed.ok(), replayed.error().message);
    REQUIRE_MESSAGE(launched.ok(), launched.error().message);
    CHECK(graph_statistics.forward_passes == eager_statistics.forward_passes);
    for (size_t row = 0; row < lengths.size(); ++row) {
      INFO(what << " row " << row);
      CHECK((*replayed)[row].tokens.size() == lengths[row]);
      CHECK((*replayed)[row].tokens == (*launched)[row].tokens);
    }
  };
  for (const auto& [name, settings] :
       {std::pair{"greedy", greedy}, std::pair{"paper", paper->settings}, std::pair{"dynamic", dynamic}})
    same(
        name,
        [&](Engine& engine, GenerationStatistics& statistics) {
          return engine.generate(prompts, settings, &statistics);
        },
        std::vector<size_t>(prompts.size(), 300));
  // Infilling reads its rotary positions from a table (the suffix's lie past the span).
  const std::vector<InfillRow> rows{{{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {21, 22, 23, 24, 25}, 300},
                                    {{12, 13, 14}, {}, 290},
                                    {{}, {26, 27, 28, 29, 30, 31, 32}, 100}};
  std::vector<size_t> span_lengths;
  for (const auto& row : rows) span_lengths.push_back(static_cast<size_t>(row.span_tokens));
  for (const auto& [name, settings] : {std::pair{"paper", paper->settings}, std::pair{"dynamic", dynamic}})
    same(
        std::string("infill ") + name,
        [&](Engine& engine, GenerationStatistics& statistics) { return engine.infill(rows, settings, &statistics); },
        span_lengths);
}
#else
namespace {

DecodeSettings block_diffusion_settings(const nlohmann::json& s) {
  DecodeSettings settings;
  settings.mode = DecodeMode::block_diffusion;
  settings.max_new_tokens = s["max_new_tokens"];
  settings.block_length = s["block_length"];
  settings.denoising_steps = s["denoising_steps"];
  settings.remasking = *parse_remasking(s["remasking"].get<std::string>());
  settings.confidence = *parse_confidence_source(s["confidence"].get<std::string>());
  settings.confidence_threshold = s["confidence_threshold"];
  settings.entropy_bound = s["entropy_bound"];
  settings.sampling = {s["temperature"].get<double>(), s["top_k"].get<int64_t>(), s["top_p"].get<double>()};
  settings.seed = s["seed"];
  settings.stop_tokens = s["stop_tokens"].get<std::vector<int64_t>>();
  return settings;
}

std::vector<InfillRow> infill_rows_of(const nlohmann::json& json) {
  std::vector<InfillRow> rows;
  for (const auto& row : json)
    rows.push_back({row["before"].get<std::vector<int64_t>>(), row["after"].get<std::vector<int64_t>>(),
                    row["span_tokens"].get<int64_t>()});
  return rows;
}

}  // namespace

TEST_CASE("greedy AR generation matches transformers token for token over 128 tokens, prefilled whole or in chunks") {
  for (const char* model : {"qwen3", "sdar"}) {
    auto fixture = open(model);
    const auto chunked = chunked_prefill(fixture);
    const auto& greedy = fixture.references["greedy"];
    DecodeSettings settings;
    settings.sampling.temperature = 0;
    settings.max_new_tokens = greedy["max_new_tokens"];
    for (Engine* engine : {fixture.engine.get(), chunked.get()}) {
      GenerationStatistics statistics;
      const auto generated = engine->generate(rows_of(greedy["prompts"]), settings, &statistics);
      REQUIRE_MESSAGE(generated.ok(), generated.error().message);
      const auto expected = rows_of(greedy["tokens"]);
      for (size_t row = 0; row < expected.size(); ++row) {
        INFO(model << " prompt " << row << (engine == chunked.get() ? ", chunked prefill" : ""));
        CHECK((*generated)[row].tokens == expected[row]);
      }
      if (engine == chunked.get()) CHECK(statistics.forward_passes > static_cast<int64_t>(settings.max_new_tokens));
    }
  }
}

TEST_CASE("block diffusion matches the Python reference decoder, prefilled whole or in chunks") {
  auto fixture = open("sdar");
  const auto chunked = chunked_prefill(fixture);
  for (const auto& run : fixture.references["block_diffusion"]) {
    const auto name = run["name"].get<std::string>();
    const auto settings = block_diffusion_settings(run["settings"]);
    for (Engine* engine : {fixture.engine.get(), chunked.get()}) {
      const auto generated = engine->generate(rows_of(run["prompts"]), settings);
      REQUIRE_MESSAGE(generated.ok(), generated.error().message);
      const auto expected = rows_of(run["tokens"]);
      for (size_t row = 0; row < expected.size(); ++row) {
        INFO(name << " prompt " << row << (engine == chunked.get() ? ", chunked prefill" : ""));
        CHECK((*generated)[row].tokens == expected[row]);
        CHECK((*generated)[row].stopped == run["stopped"][row].get<bool>());
      }
    }
  }
}

TEST_CASE("block-diffusion infilling matches the Python reference decoder, prefilled whole or in chunks") {
  auto fixture = open("sdar");
  const auto chunked = chunked_prefill(fixture);
  REQUIRE(!fixture.references["infill"].empty());
  for (const auto& run : fixture.references["infill"]) {
    const auto name = run["name"].get<std::string>();
    const auto settings = block_diffusion_settings(run["settings"]);
    const auto rows = infill_rows_of(run["rows"]);
    for (Engine* engine : {fixture.engine.get(), chunked.get()}) {
      const auto filled = engine->infill(rows, settings);
      REQUIRE_MESSAGE(filled.ok(), filled.error().message);
      const auto expected = rows_of(run["tokens"]);
      REQUIRE(filled->size() == expected.size());
      for (size_t row = 0; row < expected.size(); ++row) {
        INFO(name << " row " << row << (engine == chunked.get() ? ", chunked prefill" : ""));
        CHECK((*filled)[row].tokens == expected[row]);
        CHECK((*filled)[row].stopped == run["stopped"][row].get<bool>());
      }
    }
  }
}
#endif

TEST_CASE("infilling prefills the context once, then only denoises the span: five passes per block under paper") {
  auto fixture = open("sdar");
  const auto chunked = chunked_prefill(fixture);
  auto preset = decode_preset("paper", fixture.engine->config(), fixture.engine->generation_config());
  REQUIRE(preset.ok());
  // Contexts of 8, 7, 11 and 5 tokens: 12 columns (3 blocks) in every row; spans of 2, 2, 3 and 1 blocks.
  const std::vector<InfillRow> rows{{{3, 1, 4, 1, 5}, {9, 2, 6}, 8},
                                    {{2, 7}, {1, 8, 2, 8, 1}, 6},
                                    {{5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8}, {}, 12},
                                    {{}, {4, 6, 2, 6, 4}, 3}};
  std::vector<std::vector<int64_t>> whole;
  // Whole: one prefill pass; chunked: 8 tokens per pass over 4 rows is one block per pass, 3 passes.
  for (const auto& [engine, prefill_passes] : {std::pair{fixture.engine.get(), 1}, std::pair{chunked.get(), 3}}) {
    GenerationStatistics statistics;
    const auto filled = engine->infill(rows, preset->settings, &statistics);
    REQUIRE_MESSAGE(filled.ok(), filled.error().message);
    INFO(prefill_passes << " prefill passes");
    CHECK(statistics.prefilled_tokens == 4 * 12);
    CHECK(statistics.forward_passes == prefill_passes + 3 * 5);
    CHECK(statistics.generated_tokens == 8 + 6 + 12 + 3);
    std::vector<std::vector<int64_t>> tokens;
    for (size_t row = 0; row < rows.size(); ++row) {
      CHECK((*filled)[row].tokens.size() == static_cast<size_t>(rows[row].span_tokens));
      CHECK_FALSE((*filled)[row].stopped);
      tokens.push_back((*filled)[row].tokens);
    }
    if (whole.empty()) whole = tokens;
    CHECK(tokens == whole);
  }
  // A stop token the third row draws in its first two blocks: once every row is finished (its
  // span full, or a stop token committed), the blocks left are skipped; here the third.
  preset->settings.stop_tokens = {whole[2][5]};
  GenerationStatistics statistics;
  const auto stopped = fixture.engine->infill(rows, preset->settings, &statistics);
  REQUIRE_MESSAGE(stopped.ok(), stopped.error().message);
  REQUIRE((*stopped)[2].stopped);
  CHECK((*stopped)[2].tokens.size() <= 5);
  int64_t blocks_run = 0;
  for (size_t row = 0; row < rows.size(); ++row) {
    const auto& filled = (*stopped)[row];
    const auto tokens = static_cast<int64_t>(filled.tokens.size());
    blocks_run = std::max(blocks_run, filled.stopped ? tokens / 4 + 1 : (tokens + 3) / 4);
  }
  CHECK(blocks_run < 3);
  CHECK(statistics.prefilled_tokens == 4 * 12);
  CHECK(statistics.forward_passes == 1 + blocks_run * 5);
}

TEST_CASE("infilling with nothing after the span generates what generate() does from prompts of whole blocks") {
  auto fixture = open("sdar");
  auto preset = decode_preset("paper", fixture.engine->config(), fixture.engine->generation_config());
  REQUIRE(preset.ok());
  preset->settings.max_new_tokens = 10;
  const TokenRows prompts{{1, 2, 3, 4, 5, 6, 7, 8}, {9, 10, 11, 12}};
  GenerationStatistics generate_statistics, infill_statistics;
  const auto generated = fixture.engine->generate(prompts, preset->settings, &generate_statistics);
  const auto filled =
      fixture.engine->infill({{prompts[0], {}, 10}, {prompts[1], {}, 10}}, preset->settings, &infill_statistics);
  REQUIRE_MESSAGE(generated.ok(), generated.error().message);
  REQUIRE_MESSAGE(filled.ok(), filled.error().message);
  for (size_t row = 0; row < prompts.size(); ++row) {
    INFO("prompt " << row);
    CHECK((*filled)[row].tokens.size() == 10);
    CHECK((*filled)[row].tokens == (*generated)[row].tokens);
  }
  CHECK(infill_statistics.prefilled_tokens == generate_statistics.prefilled_tokens);
  CHECK(infill_statistics.forward_passes == generate_statistics.forward_passes);
}

TEST_CASE("the paper preset commits one token per pass: five passes per block of four") {
  auto fixture = open("sdar");
  auto preset = decode_preset("paper", fixture.engine->config(), fixture.engine->generation_config());
  REQUIRE(preset.ok());
  preset->settings.max_new_tokens = 32;
  GenerationStatistics statistics;
  // Prompts of 8 and 4 tokens: whole blocks, prefilled in one pass; then 8 blocks of 4 passes + 1.
  const auto generated =
      fixture.engine->generate({{1, 2, 3, 4, 5, 6, 7, 8}, {9, 10, 11, 12}}, preset->settings, &statistics);
  REQUIRE_MESSAGE(generated.ok(), generated.error().message);
  CHECK((*generated)[0].tokens.size() == 32);
  CHECK((*generated)[1].tokens.size() == 32);
  CHECK(statistics.forward_passes == 1 + 8 * 5);
  CHECK(statistics.prefilled_tokens == 2 * 8);
}
