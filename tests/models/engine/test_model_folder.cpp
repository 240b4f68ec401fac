// Reading model folders without torch: config.json, generation_config.json, safetensors files
// (bad ones included), sharded checkpoints, decoding presets.
#include <doctest/doctest.h>

#include <cstring>

#include "models/engine/checkpoint.hpp"
#include "models/engine/decode_settings.hpp"
#include "models/engine/model_config.hpp"
#include "tests/models/engine/safetensors_writer.hpp"

using namespace dicebench::engine;
using namespace dicebench::engine::testing;
namespace fs = std::filesystem;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

fs::path folder_with_file(const std::string& name, const std::string& bytes) {
  const auto folder = write_model_folder(name, tiny_config(), {});
  write_file(folder / "model.safetensors", bytes);
  return folder;
}

}  // namespace

TEST_CASE("config.json of Qwen3 and SDAR models") {
  auto config = tiny_config();
  config["block_size"] = 4;
  config["mask_token_id"] = 15;
  const auto folder = write_model_folder("config", config, {});
  const auto loaded = load_model_config(folder);
  REQUIRE(loaded.ok());
  CHECK(loaded->num_key_value_heads == 1);
  CHECK(loaded->head_dim == 4);
  CHECK(loaded->tie_word_embeddings);
  CHECK(loaded->dtype == DType::float32);
  CHECK(loaded->block_size == 4);
  CHECK(loaded->mask_token_id == 15);

  // transformers 5 writes dtype and rope_parameters.
  config.erase("torch_dtype");
  config.erase("rope_theta");
  config["dtype"] = "bfloat16";
  config["rope_parameters"] = {{"rope_theta", 5e5}, {"rope_type", "default"}};
  write_file(folder / "config.json", config.dump());
  const auto newer = load_model_config(folder);
  REQUIRE(newer.ok());
  CHECK(newer->dtype == DType::bfloat16);
  CHECK(newer->rope_theta == 5e5);
}

TEST_CASE("config.json errors name the file and the field") {
  const auto check = [](nlohmann::json config, const std::string& expected) {
    const auto folder = write_model_folder("bad-config", config, {});
    const auto loaded = load_model_config(folder);
    REQUIRE_FALSE(loaded.ok());
    CHECK(contains(loaded.error().message, (folder / "config.json").string()));
    CHECK_MESSAGE(contains(loaded.error().message, expected), loaded.error().message);
  };
  auto config = tiny_config();
  config["architectures"] = {"LlamaForCausalLM"};
  check(config, "unknown architecture 'LlamaForCausalLM'");
  config = tiny_config();
  config.erase("hidden_size");
  check(config, "missing field 'hidden_size'");
  config = tiny_config();
  config["num_key_value_heads"] = 3;
  check(config, "not a multiple of num_key_value_heads");
  config = tiny_config();
  config["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}};
  check(config, "rope_scaling of type 'yarn'");
  config = tiny_config();
  config["rope_scaling"] = {{"type", 3}};
  check(config, "rope_scaling of type '3'");
  config = tiny_config();
  config["architectures"] = {"Qwen3\nForCausalLM"};
  check(config, R"(unknown architecture 'Qwen3\nForCausalLM')");
  config = tiny_config();
  config["torch_dtype"] = "int8";
  check(config, "unsupported dtype");
  config = tiny_config();
  config["mask_token_id"] = 16;
  check(config, "mask_token_id 16 is outside the vocabulary");

  const auto missing = load_model_config("/nonexistent-dicebench-model");
  REQUIRE_FALSE(missing.ok());
  CHECK(contains(missing.error().message, "/nonexistent-dicebench-model/config.json"));
}

TEST_CASE("generation_config.json: eos ids as a number or a list, absent is empty") {
  const auto folder = write_model_folder("generation", tiny_config(), {});
  auto none = load_generation_config(folder);
  REQUIRE(none.ok());
  CHECK(none->eos_token_ids.empty());
  write_file(folder / "generation_config.json", R"({"eos_token_id": [3, 4], "top_k": 20, "temperature": 0.6})");
  auto list = load_generation_config(folder);
  REQUIRE(list.ok());
  CHECK(list->eos_token_ids == std::vector<int64_t>{3, 4});
  CHECK(list->top_k == 20);
  write_file(folder / "generation_config.json", R"({"eos_token_id": 7})");
  CHECK(load_generation_config(folder)->eos_token_ids == std::vector<int64_t>{7});
  write_file(folder / "generation_config.json", R"({"eos_token_id": "x"})");
  CHECK_FALSE(load_generation_config(folder).ok());
}

TEST_CASE("safetensors: tensors are read in place") {
  const auto folder = write_model_folder("safetensors", tiny_config(), {{"a", {"F32", {2, 3}}}, {"b", {"BF16", {4}}}});
  const auto file = SafetensorsFile::open(folder / "model.safetensors");
  REQUIRE(file.ok());
  const auto* a = file->find("a");
  REQUIRE(a);
  CHECK(a->shape == std::vector<int64_t>{2, 3});
  CHECK(a->data.size() == 24);
  float first = 0;
  std::memcpy(&first, a->data.data(), 4);
  CHECK(first == 0.5f);
  CHECK(file->find("b")->type == StoredType::BF16);
  CHECK(file->find("c") == nullptr);
}

TEST_CASE("safetensors: broken files are errors naming the file and the tensor") {
  const auto good = safetensors_bytes({{"w", {"F32", {4, 4}}}});
  const auto check = [](const std::string& name, const std::string& bytes, const std::string& expected) {
    const auto folder = folder_with_file(name, bytes);
    const auto file = SafetensorsFile::open(folder / "model.safetensors");
    REQUIRE_FALSE(file.ok());
    CHECK(contains(file.error().message, (folder / "model.safetensors").string()));
    CHECK_MESSAGE(contains(file.error().message, expected), file.error().message);
  };
  check("short", good.substr(0, 5), "truncated");
  std::string long_header = good;
  long_header[0] = '\xff';
  long_header[1] = '\xff';
  check("header-length", long_header, "runs past the end of the file");
  check("truncated-data", good.substr(0, good.size() - 8), "tensor 'w': data_offsets [0, 64) out of range");
  std::string garbage = good;
  garbage[9] = '!';
  check("not-json", garbage, "not a JSON object");
  const auto header = [](const std::string& json) {
    std::string bytes(8, '\0');
    bytes[0] = static_cast<char>(json.size());
    return bytes + json;
  };
  check("span", header(R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,0]}})"),
        "tensor 'w': data_offsets span 0 bytes");
  check("dtype", header(R"({"w":{"dtype":"F8_E4M3","shape":[1],"data_offsets":[0,1]}})") + "x",
        "tensor 'w': unsupported dtype");
  check("reversed", header(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}})") + "abcd", "out of range");
  check("missing", "", "truncated");
  // A name or dtype from the file may hold a line break; the error stays one line.
  check("line-break", header(R"({"a\nb":{"dtype":"F\n32","shape":[1],"data_offsets":[0,4]}})") + "abcd",
        R"(tensor 'a\nb': unsupported dtype 'F\n32')");
}

TEST_CASE("checkpoints: single file, sharded index, missing tensors and shards") {
  const auto folder = write_model_folder("sharded", tiny_config(), {});
  fs::remove(folder / "model.safetensors");
  const auto none = Checkpoint::open(folder);
  REQUIRE_FALSE(none.ok());
  CHECK(contains(none.error().message, "no model.safetensors nor model.safetensors.index.json"));

  write_file(folder / "one.safetensors", safetensors_bytes({{"a", {"F32", {2}}}}));
  write_file(folder / "two.safetensors", safetensors_bytes({{"b", {"F16", {3}}}, {"c", {"F32", {1}}}}));
  write_file(folder / "model.safetensors.index.json",
             R"({"weight_map": {"a": "one.safetensors", "b": "two.safetensors"}})");
  const auto sharded = Checkpoint::open(folder);
  REQUIRE(sharded.ok());
  CHECK(sharded->files().size() == 2);
  const auto b = sharded->find("b");
  REQUIRE(b.ok());
  CHECK(b->file->path() == folder / "two.safetensors");
  const auto c = sharded->find("c");  // in a shard but not in the index
  REQUIRE_FALSE(c.ok());
  CHECK(contains(c.error().message, "model.safetensors.index.json: missing tensor 'c'"));

  write_file(folder / "model.safetensors.index.json", R"({"weight_map": {"z": "one.safetensors"}})");
  const auto lying = Checkpoint::open(folder);
  REQUIRE_FALSE(lying.ok());
  CHECK(contains(lying.error().message, "one.safetensors: tensor 'z' missing"));
  write_file(folder / "model.safetensors.index.json", R"({"weight_map": {"a": "three.safetensors"}})");
  const auto absent = Checkpoint::open(folder);
  REQUIRE_FALSE(absent.ok());
  CHECK(contains(absent.error().message, "three.safetensors"));
}

TEST_CASE("decoding presets and the commit schedule") {
  CHECK(transfer_schedule(4, 4) == std::vector<int64_t>{1, 1, 1, 1});
  CHECK(transfer_schedule(4, 3) == std::vector<int64_t>{2, 1, 1});
  CHECK(transfer_schedule(8, 3) == std::vector<int64_t>{3, 3, 2});
  ModelConfig model;
  model.vocab_size = 151936;
  model.block_size = 4;
  model.mask_token_id = 151669;
  GenerationConfig generation;
  generation.eos_token_ids = {151645, 151643};
  const auto paper = decode_preset("paper", model, generation);
  REQUIRE(paper.ok());
  CHECK(paper->settings.mode == DecodeMode::block_diffusion);
  CHECK(paper->settings.sampling.top_k == 1);
  CHECK(paper->settings.remasking == Remasking::low_confidence_static);
  CHECK(paper->settings.max_new_tokens == 4096);
  CHECK(paper->settings.stop_tokens.empty());
  CHECK(paper->dtype == DType::float16);
  const auto fast = decode_preset("fast", model, generation);
  REQUIRE(fast.ok());
  CHECK(fast->settings.remasking == Remasking::low_confidence_dynamic);
  CHECK(fast->settings.confidence == ConfidenceSource::unfiltered);
  CHECK(fast->settings.stop_tokens == std::vector<int64_t>{151645, 151643});
  CHECK(validate_decode_settings(fast->settings, model).ok());
  const auto unknown = decode_preset("papr", model, generation);
  REQUIRE_FALSE(unknown.ok());
  CHECK(contains(unknown.error().message, "did you mean 'paper'"));
  model.mask_token_id.reset();
  CHECK_FALSE(validate_decode_settings(paper->settings, model).ok());
  auto with_mask = paper->settings;
  with_mask.mask_token_id = 151669;  // from the tokenizer, where config.json names none
  CHECK(validate_decode_settings(with_mask, model).ok());
  CHECK(mask_token_of(with_mask, model) == 151669);
  with_mask.mask_token_id = 151936;
  CHECK_FALSE(validate_decode_settings(with_mask, model).ok());
}
