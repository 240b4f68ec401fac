// Unit tests of the local model plugin's torch-free parts: the names, the Hugging Face cache
// lookup (refs/main, snapshots, the environment), the folder identity hash and the settings.
#include "models/local/folder_identity.hpp"
#include "models/local/hf_cache.hpp"
#include "models/local/local_settings.hpp"
#include "models/local/model_catalog.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "tests/models/engine/safetensors_writer.hpp"
#include "tests/test_files.hpp"

using namespace dicebench;
using namespace dicebench::local;
namespace fs = std::filesystem;

namespace {

using test::TempDir;
using test::write;

// Sets an environment variable for the scope, restoring the old value after.
struct ScopedEnv {
  std::string name;
  std::optional<std::string> old;
  ScopedEnv(std::string n, const char* value) : name(std::move(n)) {
    if (const char* current = std::getenv(name.c_str())) old = current;
    if (value)
      setenv(name.c_str(), value, 1);
    else
      unsetenv(name.c_str());
  }
  ~ScopedEnv() {
    if (old)
      setenv(name.c_str(), old->c_str(), 1);
    else
      unsetenv(name.c_str());
  }
};

engine::ModelConfig sdar_config() {
  engine::ModelConfig c;
  c.architecture = "SDARForCausalLM";
  c.vocab_size = 512;
  c.max_position_embeddings = 8192;
  c.block_size = 4;
  return c;
}

Result<LocalSettings> settings_with(const std::map<std::string, std::string>& values, std::string_view preset,
                                    const engine::ModelConfig& config, bool gpu = false) {
  static const engine::GenerationConfig generation{{508, 506}, std::nullopt, std::nullopt, {}, {}, {}};
  const SettingLookup lookup = [&](const std::string& key) -> std::optional<std::string> {
    auto it = values.find(key);
    return it == values.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  return read_settings(lookup, SettingsContext{preset, config, generation, 511, gpu});
}

}  // namespace

TEST_CASE("the catalog names the ten models with their hub repositories and presets") {
  CHECK(model_catalog().size() == 10);
  REQUIRE(find_model("dice-8b"));
  CHECK(find_model("dice-8b")->hub_repo == "DeadlyKitt3n/DICE-8B");
  CHECK(find_model("dice-8b")->default_preset == "paper");
  CHECK(find_model("sdar-4b")->hub_repo == "JetLM/SDAR-4B-Chat");
  CHECK(find_model("sdar-4b")->default_preset == "paper");
  CHECK(find_model("qwen3-1.7b")->hub_repo == "Qwen/Qwen3-1.7B");
  CHECK(find_model("qwen3-1.7b")->default_preset == "greedy");
  CHECK(find_model("cudallm-8b")->hub_repo == "ByteDance-Seed/cudaLLM-8B");
  CHECK(find_model("cudallm-8b")->default_preset == "greedy");
  CHECK_FALSE(find_model("dice-16b"));
}

TEST_CASE("the hub cache folder follows HF_HUB_CACHE, HF_HOME, XDG_CACHE_HOME, HOME in that order") {
  ScopedEnv hub("HF_HUB_CACHE", "/a/hub-cache"), home("HF_HOME", "/b/hf-home"), xdg("XDG_CACHE_HOME", "/c/xdg"),
      user("HOME", "/d/user");
  CHECK(hub_cache_dir() == fs::path("/a/hub-cache"));
  setenv("HF_HUB_CACHE", "~/hub-cache", 1);
  CHECK(hub_cache_dir() == fs::path("/d/user/hub-cache"));
  unsetenv("HF_HUB_CACHE");
  CHECK(hub_cache_dir() == fs::path("/b/hf-home/hub"));
  unsetenv("HF_HOME");
  CHECK(hub_cache_dir() == fs::path("/c/xdg/huggingface/hub"));
  unsetenv("XDG_CACHE_HOME");
  CHECK(hub_cache_dir() == fs::path("/d/user/.cache/huggingface/hub"));
}

TEST_CASE("a cached model is its refs/main snapshot, else its newest snapshot") {
  TempDir tmp("cache");
  const fs::path repo = tmp.path / "models--JetLM--SDAR-8B-Chat";
  write(repo / "snapshots" / "aaa111" / "config.json", "{}");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  write(repo / "snapshots" / "bbb222" / "config.json", "{}");

  SUBCASE("without refs/main the newest snapshot") {
    auto found = find_cached_model(tmp.path, "JetLM/SDAR-8B-Chat");
    REQUIRE_MESSAGE(found, found.error().message);
    CHECK(found->revision == "bbb222");
    CHECK(found->folder == repo / "snapshots" / "bbb222");
  }
  SUBCASE("refs/main names the older one") {
    write(repo / "refs" / "main", "aaa111\n");
    auto found = find_cached_model(tmp.path, "JetLM/SDAR-8B-Chat");
    REQUIRE_MESSAGE(found, found.error().message);
    CHECK(found->revision == "aaa111");
  }
  SUBCASE("refs/main names a snapshot that is not there") {
    write(repo / "refs" / "main", "ccc333");
    auto found = find_cached_model(tmp.path, "JetLM/SDAR-8B-Chat");
    REQUIRE_FALSE(found);
    CHECK(found.error().message.find("ccc333") != std::string::npos);
    CHECK(found.error().message.find("hf download JetLM/SDAR-8B-Chat") != std::string::npos);
  }
  SUBCASE("a snapshot without config.json is an interrupted download") {
    write(repo / "refs" / "main", "aaa111");
    fs::remove(repo / "snapshots" / "aaa111" / "config.json");
    auto found = find_cached_model(tmp.path, "JetLM/SDAR-8B-Chat");
    REQUIRE_FALSE(found);
    CHECK(found.error().message.find("no config.json") != std::string::npos);
  }
}

TEST_CASE("a model missing from the cache says where it looked and the command that downloads it") {
  TempDir tmp("missing");
  auto found = find_cached_model(tmp.path, "DeadlyKitt3n/DICE-8B");
  REQUIRE_FALSE(found);
  const std::string& message = found.error().message;
  CHECK(message.find((tmp.path / "models--DeadlyKitt3n--DICE-8B" / "snapshots").string()) != std::string::npos);
  CHECK(message.find("`hf download DeadlyKitt3n/DICE-8B`") != std::string::npos);
  CHECK(message.find("`huggingface-cli download DeadlyKitt3n/DICE-8B`") != std::string::npos);
  CHECK(message.find("--model-path") != std::string::npos);
  CHECK(message.find('\n') == std::string::npos);

  write(tmp.path / "models--DeadlyKitt3n--DICE-8B" / "snapshots" / ".keep", "");  // a folder without snapshots
  auto empty = find_cached_model(tmp.path, "DeadlyKitt3n/DICE-8B");
  REQUIRE_FALSE(empty);
  CHECK(empty.error().message.find("holds no snapshot") != std::string::npos);
}

TEST_CASE("the folder identity covers config.json and the safetensors headers, not the weights' bytes") {
  TempDir tmp("identity");
  const auto tensors = engine::testing::tiny_tensors();
  write(tmp.path / "config.json", engine::testing::tiny_config().dump());
  const std::string weights = engine::testing::safetensors_bytes(tensors);
  write(tmp.path / "model.safetensors", weights);
  auto first = folder_identity(tmp.path);
  REQUIRE_MESSAGE(first, first.error().message);
  CHECK(first->rfind("sha256:", 0) == 0);

  // The same header over other data: the same identity (the data is never read).
  std::string changed_data = weights;
  changed_data.back() ^= 0x5a;
  write(tmp.path / "model.safetensors", changed_data);
  CHECK(*folder_identity(tmp.path) == *first);

  // Another shape changes the header and so the identity.
  auto other = tensors;
  other["model.norm.weight"].dtype = "BF16";
  write(tmp.path / "model.safetensors", engine::testing::safetensors_bytes(other));
  const auto reshaped = folder_identity(tmp.path);
  CHECK(*reshaped != *first);

  // So does config.json.
  write(tmp.path / "model.safetensors", weights);
  auto config = engine::testing::tiny_config();
  config["rope_theta"] = 5000.0;
  write(tmp.path / "config.json", config.dump());
  CHECK(*folder_identity(tmp.path) != *first);

  // A header length past the end of the file is an error naming it.
  write(tmp.path / "model.safetensors", weights.substr(0, 20));
  auto broken = folder_identity(tmp.path);
  REQUIRE_FALSE(broken);
  CHECK(broken.error().message.find("model.safetensors") != std::string::npos);
}

TEST_CASE("settings: the name's preset, then local.* settings over it") {
  const auto config = sdar_config();
  SUBCASE("DICE's paper preset on the CPU: float32, the tokenizer's mask token") {
    auto s = settings_with({}, "paper", config);
    REQUIRE_MESSAGE(s, s.error().message);
    CHECK(s->preset == "paper");
    CHECK(s->decode.mode == engine::DecodeMode::block_diffusion);
    CHECK(s->decode.max_new_tokens == 4096);
    CHECK(s->decode.sampling.top_k == 1);
    CHECK(s->decode.mask_token_id == 511);
    CHECK(s->decode.stop_tokens.empty());
    CHECK(s->device == "cpu");
    CHECK(s->dtype == engine::DType::float32);
    CHECK_FALSE(s->thinking);
    CHECK_FALSE(s->fixed_seed);
    const auto json = settings_json(*s);
    CHECK(json["strategy"] == "low_confidence_static");
    CHECK(json["mask_token_id"] == 511);
    CHECK(json["dtype"] == "float32");
  }
  SUBCASE("on a GPU the preset's published dtype") {
    auto paper = settings_with({}, "paper", config, /*gpu=*/true);
    CHECK(paper->device == "cuda");
    CHECK(paper->dtype == engine::DType::float16);
    auto greedy = settings_with({}, "greedy", config, true);
    CHECK(greedy->dtype == engine::DType::bfloat16);
    CHECK(greedy->decode.mode == engine::DecodeMode::autoregressive);
    CHECK(greedy->decode.stop_tokens == std::vector<int64_t>{508, 506});
    CHECK_FALSE(settings_json(*greedy).contains("block_length"));
  }
  SUBCASE("every key overrides") {
    auto s = settings_with({{"local.preset", "fast"},
                            {"local.max_new_tokens", "64"},
                            {"local.temperature", "0.7"},
                            {"local.top_k", "20"},
                            {"local.top_p", "0.95"},
                            {"local.block_length", "8"},
                            {"local.denoising_steps", "2"},
                            {"local.strategy", "entropy_bounded"},
                            {"local.confidence", "filtered"},
                            {"local.threshold", "0.8"},
                            {"local.entropy_bound", "1.5"},
                            {"local.seed", "42"},
                            {"local.thinking", "true"},
                            {"local.device", "cuda:1"},
                            {"local.dtype", "bfloat16"},
                            {"local.batch", "3"}},
                           "paper", config);
    REQUIRE_MESSAGE(s, s.error().message);
    const auto& d = s->decode;
    CHECK(s->preset == "fast");
    CHECK(d.max_new_tokens == 64);
    CHECK(d.sampling.temperature == doctest::Approx(0.7));
    CHECK(d.sampling.top_k == 20);
    CHECK(d.sampling.top_p == doctest::Approx(0.95));
    CHECK(d.block_length == 8);
    CHECK(d.denoising_steps == 2);
    CHECK(d.remasking == engine::Remasking::entropy_bounded);
    CHECK(d.confidence == engine::ConfidenceSource::filtered);
    CHECK(d.confidence_threshold == doctest::Approx(0.8));
    CHECK(d.entropy_bound == doctest::Approx(1.5));
    CHECK(s->fixed_seed == 42u);
    CHECK(s->thinking);
    CHECK(s->device == "cuda:1");
    CHECK(s->dtype == engine::DType::bfloat16);
    CHECK(s->batch == 3);
    CHECK(settings_json(*s)["seed"] == 42);
  }
  SUBCASE("config.json's mask token wins over the tokenizer's") {
    auto with_mask = config;
    with_mask.mask_token_id = 7;
    CHECK(settings_with({}, "paper", with_mask)->decode.mask_token_id == 7);
  }
}

TEST_CASE("bad settings name the setting and the value") {
  const auto config = sdar_config();
  const std::pair<std::map<std::string, std::string>, std::string> cases[] = {
      {{{"local.preset", "turbo"}}, "unknown decoding preset 'turbo'"},
      {{{"local.max_new_tokens", "many"}}, "'local.max_new_tokens' must be a whole number, not 'many'"},
      {{{"local.max_new_tokens", "0"}}, "'local.max_new_tokens' must be at least 1"},
      {{{"local.temperature", "hot"}}, "'local.temperature' must be a number, not 'hot'"},
      {{{"local.top_p", "2"}}, "top_p must be in (0, 1]"},
      {{{"local.strategy", "fastest"}}, "'local.strategy' must be sequential, low_confidence_static"},
      {{{"local.confidence", "some"}}, "'local.confidence' must be filtered or unfiltered"},
      {{{"local.thinking", "yes"}}, "'local.thinking' must be true or false, not 'yes'"},
      {{{"local.device", "tpu"}}, "'local.device' must be cpu, cuda or cuda:N, not 'tpu'"},
      {{{"local.dtype", "int8"}}, "'local.dtype' must be float32, float16 or bfloat16, not 'int8'"},
      {{{"local.batch", "0"}}, "'local.batch' must be at least 1"},
  };
  for (const auto& [values, expected] : cases) {
    auto s = settings_with(values, "paper", config);
    REQUIRE_FALSE(s);
    CHECK_MESSAGE(s.error().message.find(expected) != std::string::npos, s.error().message);
  }
  // Block diffusion on a model whose config and tokenizer name no mask token.
  auto plain = config;
  const engine::GenerationConfig generation;
  const SettingLookup nothing = [](const std::string&) { return std::optional<std::string>(); };
  auto s = read_settings(nothing, SettingsContext{"paper", plain, generation, std::nullopt, false});
  REQUIRE_FALSE(s);
  CHECK(s.error().message.find("mask token") != std::string::npos);
}
