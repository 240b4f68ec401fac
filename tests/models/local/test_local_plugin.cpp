// Integration tests of the local model plugin through the dicebench CLI, on the tiny random-weight
// folders of make_local_models.py: DICE's done-when command on a tiny SDAR folder, an AR Qwen3
// folder, dice-infill's spans filled natively (SDAR) and through the chat prompt (both), models
// found in a Hugging Face cache tree, settings recorded with the run, and bad folders and settings
// ending in one error line with nothing stored lost.
#include "tests/core/cli/cli_runner.hpp"
#include "tests/test_files.hpp"

#include "core/base/sha256.hpp"
#include "core/base/text.hpp"
#include "models/local/answer_text.hpp"
#include "results/store/query.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

using namespace dicebench;
using test::run_cli;
namespace fs = std::filesystem;

using test::check_one_error_line;

namespace {

const fs::path kFixture = fs::path(DICEBENCH_BUILD_DIR) / "tests" / "local-models";
const std::string kSdar = (kFixture / "sdar").string();
const std::string kQwen3 = (kFixture / "qwen3").string();
const std::string kKernelBench = (kFixture / "kernelbench").string();
const std::string kInfillItems = std::string(DICEBENCH_TEST_DATA_DIR) + "/dice_infill/items.json";

// A temporary folder; the children see only the Hugging Face cache these tests point them to.
struct TempDir : test::TempDir {
  explicit TempDir(const std::string& name) : test::TempDir("local-cli-" + name) {
    for (const char* variable : {"HF_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME"}) unsetenv(variable);
  }
};
using test::file_hash;
using test::scalar;
using test::write;

nlohmann::json run_config(const std::string& db, int run) {
  return nlohmann::json::parse(scalar(db, "select config from runs where id = " + std::to_string(run)));
}

std::vector<std::string> run_args(const std::string& model, const std::string& db, std::vector<std::string> extra) {
  std::vector<std::string> args = {
      "run",        "--model",         model,  "--suite", "kernelbench-l1", "--kernelbench-root",
      kKernelBench, "--generate-only", "--db", db};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// A Hugging Face cache entry for `repo` whose snapshot links to the files of `source`, as the
// cache links snapshots to its blobs.
fs::path cache_snapshot(const fs::path& hub, const std::string& repo_folder, const std::string& revision,
                        const fs::path& source) {
  const fs::path snapshot = hub / repo_folder / "snapshots" / revision;
  fs::create_directories(snapshot);
  for (const auto& entry : fs::directory_iterator(source))
    fs::create_symlink(entry.path(), snapshot / entry.path().filename());
  return snapshot;
}

}  // namespace

TEST_CASE("list models shows the ten local models") {
  auto models = run_cli({"list", "models"});
  REQUIRE_MESSAGE(models.exit_code == 0, models.err);
  for (const char* name : {"dice-1.7b", "dice-4b", "dice-8b", "sdar-1.7b", "sdar-4b", "sdar-8b", "qwen3-1.7b",
                           "qwen3-4b", "qwen3-8b", "cudallm-8b"})
    CHECK_MESSAGE(models.out.find(name) != std::string::npos, models.out);
}

TEST_CASE("dice-8b on a tiny SDAR folder with DICE's paper preset stores four samples for problems 1-4") {
  TempDir tmp("dice");
  const std::string db = tmp / "results.db";
  // The done-when command of issue 4, on a tiny folder, with 256 new tokens instead of the preset's
  // 4096 (test_local_models checks that default): 4096 took 5 to 10 minutes of CI's 2 cores, for
  // the same decoding loop 16 times over.
  auto r =
      run_cli({"run", "--model", "dice-8b", "--model-path", kSdar, "--suite", "kernelbench-l1", "--problems", "1-4",
               "--generate-only", "--kernelbench-root", kKernelBench, "--db", db, "--set", "local.max_new_tokens=256"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(scalar(db, "select count(*) from samples") == "4");
  CHECK(scalar(db, "select group_concat(problem_id) from (select problem_id from samples order by problem_id)") ==
        "1,2,3,4");
  CHECK(scalar(db, "select status from runs where id = 1") == "finished");

  const auto config = run_config(db, 1);
  const auto& model = config["model"];
  CHECK(model["model"] == "dice-8b");
  CHECK(model["folder"] == fs::path(kSdar).lexically_normal().string());
  CHECK(model["revision"].is_null());
  CHECK(model["folder_identity"].get<std::string>().rfind("sha256:", 0) == 0);
  CHECK(model["chat_template"] == "qwen3, no thinking");
  const auto& generation = model["generation"];
  CHECK(generation["preset"] == "paper");
  CHECK(generation["max_new_tokens"] == 256);
  CHECK(generation["top_k"] == 1);
  CHECK(generation["strategy"] == "low_confidence_static");
  CHECK(generation["block_length"] == 4);
  CHECK(generation["mask_token_id"] == 511);  // <|MASK|> from the tokenizer: config.json names none
  CHECK(config["model_plugin"]["name"] == "local");
  CHECK(config["settings"]["model_path"] == kSdar);

  // The paper preset has no stop tokens: every row decodes all 256 tokens, 5 passes per block
  // of 4 (each pass commits the leftmost mask, then one pass writes the block).
  const auto stats = nlohmann::json::parse(scalar(db, "select gen_stats from samples where problem_id = 1"));
  CHECK(stats["completion_tokens"] == 256);
  CHECK(stats["batch_size"] == 4);
  CHECK(stats["batch_forward_passes"].get<int64_t>() >= 256 / 4 * 5);
}

TEST_CASE("qwen3-8b on a tiny Qwen3 folder decodes greedily, and --set and TOML settings land in the run") {
  TempDir tmp("qwen3");
  const std::string db = tmp / "results.db";
  write(tmp.path / "run.toml",
        "model_path = \"" + kQwen3 + "\"\n[local]\nmax_new_tokens = 12\ntemperature = 0.5\nthinking = true\n");
  auto r = run_cli(run_args("qwen3-8b", db,
                            {"--config", tmp / "run.toml", "--problems", "1,2", "--set", "local.max_new_tokens=6",
                             "--set", "local.top_k=3", "--set", "local.seed=9", "--set", "local.batch=1"}));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(scalar(db, "select count(*) from samples") == "2");
  const auto config = run_config(db, 1);
  CHECK(config["settings"]["local.max_new_tokens"] == "6");
  const auto& generation = config["model"]["generation"];
  CHECK(generation["preset"] == "greedy");
  CHECK(generation["mode"] == "autoregressive");
  CHECK(generation["max_new_tokens"] == 6);  // the flag over the file
  CHECK(generation["temperature"] == 0.5);   // the file over the preset
  CHECK(generation["top_k"] == 3);
  CHECK(generation["seed"] == 9);
  CHECK(generation["batch"] == 1);
  CHECK(generation["stop_tokens"] == nlohmann::json::array({508, 506}));
  CHECK(config["model"]["chat_template"] == "qwen3, thinking");
  CHECK(config["batch_size"] == 1);  // local.batch is the model's preferred batch
  for (const char* problem : {"1", "2"}) {
    const auto stats =
        nlohmann::json::parse(scalar(db, std::string("select gen_stats from samples where problem_id = ") + problem));
    CHECK(stats["completion_tokens"].get<int>() <= 6);
    CHECK(stats["seed"] == 9);
    CHECK(stats["batch_size"] == 1);
  }
}

TEST_CASE("qwen3-8b on a tiny Qwen3 folder answers dice-infill's chat prompt, and every sample's middle is measured") {
  TempDir tmp("infill-chat");
  const std::string db = tmp / "results.db";
  auto r =
      run_cli({"run", "--model", "qwen3-8b", "--model-path", kQwen3, "--suite", "dice-infill", "--dice-infill-data",
               kInfillItems, "--generate-only", "--db", db, "--set", "local.max_new_tokens=8"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(scalar(db, "select count(*) from samples") == "2");
  // Random weights write no reference middle: never an exact match, and always a distance.
  CHECK(scalar(db, "select count(*) from samples where json_extract(extraction_details, '$.infill_exact_match') = 0") ==
        "2");
  CHECK(scalar(
            db,
            "select count(*) from samples where json_type(extraction_details, '$.infill_edit_distance') = 'integer'") ==
        "2");
  // An autoregressive model fills no span natively: auto prompts it, native is refused.
  CHECK(run_config(db, 1)["settings"]["infill"] == "chat");
  check_one_error_line(
      run_cli({"run", "--model", "qwen3-8b", "--model-path", kQwen3, "--suite", "dice-infill", "--dice-infill-data",
               kInfillItems, "--generate-only", "--db", db, "--infill", "native"}),
      "infill=native: model qwen3-8b does not fill spans natively");
  CHECK(scalar(db, "select count(*) from runs") == "1");
}

TEST_CASE("dice-1.7b on a tiny SDAR folder fills dice-infill's spans natively, or answers the chat prompt when asked") {
  TempDir tmp("infill-native");
  const std::string db = tmp / "results.db";
  const std::vector<std::string> base = {"run",        "--model",         "dice-1.7b",   "--model-path",
                                         kSdar,        "--suite",         "dice-infill", "--dice-infill-data",
                                         kInfillItems, "--generate-only", "--db",        db};
  auto r = run_cli(base);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(run_config(db, 1)["settings"]["infill"] == "native");
  CHECK(run_config(db, 1)["model"]["generation"]["infill_span_factor"] == 1.5);
  const auto items = nlohmann::json::parse(test::read_text(kInfillItems));
  for (const auto& item : items) {
    const std::string where = " from samples where run = 1 and problem_id = " + std::to_string(item["id"].get<int>());
    const auto stats = nlohmann::json::parse(scalar(db, "select gen_stats" + where));
    CHECK(stats["infill"] == "native");
    // The budget: the middle's bytes at the item's tokens per byte (at most one), times 1.5, in whole
    // blocks.
    const auto middle_bytes = static_cast<int64_t>(item["middle"].get<std::string>().size());
    const auto budget = stats["span_budget_tokens"].get<int64_t>();
    CHECK(budget > 0);
    CHECK(budget % 4 == 0);  // whole blocks of the paper preset
    CHECK(budget <= middle_bytes * 3 / 2 + 4);
    CHECK(stats["completion_tokens"].get<int64_t>() <= stats["span_budget_tokens"].get<int64_t>());
    // The span goes between prefix and suffix as the model wrote it.
    const std::string span = scalar(db, "select completion" + where);
    CHECK(scalar(db, "select candidate" + where) ==
          item["prefix"].get<std::string>() + span + item["suffix"].get<std::string>());
    CHECK(scalar(db, "select json_type(extraction_details, '$.infill_edit_distance')" + where) == "integer");
  }
  // The stored prompt hash is the hash of what the model saw: the span's JSON, not the chat prompt.
  CHECK(scalar(db, "select count(distinct prompt_hash) from samples where run = 1") == "2");

  auto chat = base;
  chat.insert(chat.end(), {"--infill", "chat", "--set", "local.max_new_tokens=8"});
  r = run_cli(chat);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(run_config(db, 2)["settings"]["infill"] == "chat");
  CHECK(scalar(db, "select count(*) from samples where run = 2 and json_extract(gen_stats, '$.infill') is null") ==
        "2");
  CHECK(scalar(db,
               "select count(*) from samples s1 join samples s2 on s1.problem_id = s2.problem_id and s1.run = 1 and "
               "s2.run = 2 "
               "where s1.prompt_hash = s2.prompt_hash") == "0");

  // A budget past the context is one error line naming the item, and nothing more is stored.
  auto huge = base;
  huge.insert(huge.end(), {"--set", "local.infill_span_factor=100000"});
  const auto refused = run_cli(huge);
  check_one_error_line(refused, "dice-1.7b: problem 101 (infill_101): the span's context has");
  CHECK(scalar(db, "select count(*) from runs") == "2");
}

TEST_CASE("models are found in the Hugging Face cache: refs/main, else the newest snapshot") {
  TempDir tmp("cache");
  const std::string db = tmp / "results.db";
  const fs::path hub = tmp.path / "hf-home" / "hub";
  const auto main_snapshot = cache_snapshot(hub, "models--JetLM--SDAR-1.7B-Chat", "0123abcd", kSdar);
  fs::create_directories(hub / "models--JetLM--SDAR-1.7B-Chat" / "snapshots" / "older-broken");  // no config.json
  write(hub / "models--JetLM--SDAR-1.7B-Chat" / "refs" / "main", "0123abcd");
  auto r = run_cli(run_args("sdar-1.7b", db, {"--problems", "1", "--set", "local.max_new_tokens=8"}),
                   {"HF_HOME=" + (tmp / "hf-home")});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  auto model = run_config(db, 1)["model"];
  CHECK(model["revision"] == "0123abcd");
  CHECK(model["folder"] == main_snapshot.string());
  CHECK(model["hub_repo"] == "JetLM/SDAR-1.7B-Chat");
  // The same files found through the cache or given directly: the same identity.
  auto direct =
      run_cli(run_args("sdar-1.7b", db, {"--problems", "1", "--set", "local.max_new_tokens=8", "--model-path", kSdar}));
  REQUIRE_MESSAGE(direct.exit_code == 0, direct.err);
  CHECK(run_config(db, 2)["model"]["folder_identity"] == model["folder_identity"]);

  // HF_HUB_CACHE names the hub folder itself; without refs/main the only snapshot is taken.
  const auto qwen = cache_snapshot(tmp.path / "hub-cache", "models--Qwen--Qwen3-4B", "feed", kQwen3);
  auto ar = run_cli(run_args("qwen3-4b", db, {"--problems", "2", "--set", "local.max_new_tokens=4"}),
                    {"HF_HUB_CACHE=" + (tmp / "hub-cache"), "HF_HOME=" + (tmp / "hf-home")});
  REQUIRE_MESSAGE(ar.exit_code == 0, ar.err);
  CHECK(run_config(db, 3)["model"]["folder"] == qwen.string());
}

TEST_CASE("a missing model says where it looked and how to download it, and stores nothing") {
  TempDir tmp("missing");
  const std::string db = tmp / "results.db";
  auto r = run_cli(run_args("dice-4b", db, {}), {"HF_HOME=" + (tmp / "empty")});
  check_one_error_line(r, "dice-4b: DeadlyKitt3n/DICE-4B is not in the Hugging Face cache");
  CHECK(r.err.find(tmp / "empty/hub/models--DeadlyKitt3n--DICE-4B/snapshots") != std::string::npos);
  CHECK(r.err.find("`hf download DeadlyKitt3n/DICE-4B`") != std::string::npos);
  if (fs::exists(db)) CHECK(scalar(db, "select count(*) from runs") == "0");
}

TEST_CASE("bad folders and settings end in one error line and leave the database as it was") {
  TempDir tmp("bad");
  const std::string db = tmp / "results.db";
  auto first = run_cli(
      run_args("qwen3-1.7b", db, {"--model-path", kQwen3, "--problems", "1", "--set", "local.max_new_tokens=2"}));
  REQUIRE_MESSAGE(first.exit_code == 0, first.err);
  const std::string before = file_hash(db);

  // Broken copies of the tiny Qwen3 folder.
  const auto broken_copy = [&](const std::string& name) {
    const fs::path folder = tmp.path / name;
    fs::copy(kQwen3, folder);
    return folder;
  };
  const fs::path no_config = broken_copy("no-config");
  fs::remove(no_config / "config.json");
  const fs::path truncated = broken_copy("truncated");
  fs::resize_file(truncated / "model.safetensors", 100);
  const fs::path bad_tokenizer = broken_copy("bad-tokenizer");
  write(bad_tokenizer / "tokenizer.json", "{\"model\": {\"type\": \"Unigram\"}}");

  const std::pair<std::vector<std::string>, std::string> cases[] = {
      {{"--model-path", tmp / "nowhere"}, "--model-path " + (tmp / "nowhere") + ": not a folder"},
      {{"--model-path", no_config.string()}, (no_config / "config.json").string()},
      {{"--model-path", truncated.string()}, (truncated / "model.safetensors").string()},
      {{"--model-path", bad_tokenizer.string()}, (bad_tokenizer / "tokenizer.json").string()},
      {{"--model-path", kQwen3, "--set", "local.top_p=2"}, "top_p must be in (0, 1], got 2"},
      {{"--model-path", kQwen3, "--set", "local.strategy=fastest"}, "'local.strategy' must be sequential"},
      // The prompt and 8000 new tokens exceed the tiny model's 8192 positions.
      {{"--model-path", kQwen3, "--set", "local.max_new_tokens=8000"}, "exceeds the model's context of 8192"},
  };
  for (const auto& [extra, expected] : cases) {
    auto args = run_args("qwen3-1.7b", db, extra);
    args.insert(args.end(), {"--problems", "1"});
    auto r = run_cli(args);
    check_one_error_line(r, expected);
    CHECK(file_hash(db) == before);
  }
}

TEST_CASE("the answer ends at the end of the turn and keeps what follows the last </think>") {
  auto tokenizer = models::Tokenizer::load(kQwen3);
  REQUIRE_MESSAGE(tokenizer, tokenizer.error().message);
  const auto encode = [&](const std::string& text) {
    const auto ids = tokenizer->encode(text);
    return std::vector<int64_t>(ids.begin(), ids.end());
  };
  const std::vector<int64_t> end_of_turn = {*tokenizer->token_id("<|im_end|>"), *tokenizer->token_id("<|endoftext|>")};

  const auto thought =
      encode("<think>\nplan a kernel\n</think>\n\nHere:\n```python\nx = 1\n```<|im_end|>junk after the turn");
  const auto answer = local::answer_text(*tokenizer, thought, end_of_turn);
  CHECK(answer.text == "\n\nHere:\n```python\nx = 1\n```");
  CHECK(answer.ended_turn);
  CHECK(answer.thinking_bytes == std::string("<think>\nplan a kernel\n</think>").size());
  CHECK(answer.answer_tokens < thought.size());

  const auto plain = local::answer_text(*tokenizer, encode("no thinking, no end"), end_of_turn);
  CHECK(plain.text == "no thinking, no end");
  CHECK_FALSE(plain.ended_turn);
  CHECK(plain.thinking_bytes == 0);
}
