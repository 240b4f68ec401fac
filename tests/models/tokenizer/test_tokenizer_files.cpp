// The tokenizer on small hand-written tokenizer.json files: what it reads from them, and a clear
// error naming the file for each kind of bad or unsupported input.
#include "models/tokenizer/tokenizer.hpp"
#include "tokenizer_test_support.hpp"

#include <doctest/doctest.h>

namespace dicebench::models {
namespace {

using nlohmann::json;
using testing::TemporaryFolder;

// A byte-level BPE over "a", "b", " " (written "Ġ") with two merges, split as Qwen2's files are.
// The expectations below are what Hugging Face tokenizers 0.23 gives for this file.
json minimal_tokenizer() {
  return json::parse(R"({
    "version": "1.0",
    "added_tokens": [
      {"id": 5, "content": "<|im_end|>", "single_word": false, "lstrip": false, "rstrip": false,
       "normalized": false, "special": true},
      {"id": 6, "content": "<x>", "single_word": false, "lstrip": true, "rstrip": true,
       "normalized": false, "special": false},
      {"id": 7, "content": "\u00e9", "single_word": false, "lstrip": false, "rstrip": false,
       "normalized": true, "special": false}],
    "normalizer": {"type": "NFC"},
    "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
      {"type": "Split", "pattern": {"Regex": "\\s+|\\S+"}, "behavior": "Isolated", "invert": false},
      {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false}]},
    "decoder": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false},
    "model": {"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": "",
              "end_of_word_suffix": "", "fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
              "vocab": {"a": 0, "b": 1, "Ġ": 2, "ab": 3, "abab": 4},
              "merges": ["a b", "ab ab"]}
  })");
}

// Writes `tokenizer` (and the config, when given) into a fresh folder and loads it.
struct Loaded {
  TemporaryFolder folder;
  Result<Tokenizer> result = make_error("not loaded");
  std::string tokenizer_path() const { return (folder.path() / "tokenizer.json").string(); }
};
std::unique_ptr<Loaded> load_written(const std::string& tokenizer_json, const std::string* config = nullptr) {
  auto loaded = std::make_unique<Loaded>();
  testing::write_text(loaded->folder.path() / "tokenizer.json", tokenizer_json);
  if (config) testing::write_text(loaded->folder.path() / "tokenizer_config.json", *config);
  loaded->result = Tokenizer::load(loaded->folder.path().string());
  return loaded;
}

// Loading must fail with one line naming `file` and saying `what`.
void check_error(const Loaded& loaded, const std::string& file, const std::string& what) {
  REQUIRE_FALSE(loaded.result.ok());
  const std::string& message = loaded.result.error().message;
  INFO("message: ", message);
  CHECK(message.find((loaded.folder.path() / file).string()) != std::string::npos);
  CHECK(message.find(what) != std::string::npos);
  CHECK(message.find('\n') == std::string::npos);
}

TEST_CASE("a hand-written tokenizer.json: merges, added tokens with lstrip/rstrip or normalized") {
  auto loaded = load_written(minimal_tokenizer().dump());
  REQUIRE_MESSAGE(loaded->result.ok(), (loaded->result.ok() ? "" : loaded->result.error().message));
  const Tokenizer& tokenizer = loaded->result.value();
  using Ids = std::vector<int32_t>;
  CHECK(tokenizer.encode("abab") == Ids{4});
  CHECK(tokenizer.encode("ababa b") == Ids{4, 0, 2, 1});
  CHECK(tokenizer.encode("bba") == Ids{1, 1, 0});
  CHECK(tokenizer.encode("a c") == Ids{0, 2});  // no token for "c": dropped, as Hugging Face does
  // <x> absorbs the whitespace around it; <|im_end|> does not.
  CHECK(tokenizer.encode("ab  <x>  ab") == Ids{3, 6, 3});
  CHECK(tokenizer.encode("ab <|im_end|> ab") == Ids{3, 2, 5, 2, 3});
  CHECK(tokenizer.encode(" <x>a<x> ") == Ids{6, 0, 6});
  CHECK(tokenizer.encode("a\u3000<x>\u0085b") == Ids{0, 6, 1});  // Unicode whitespace too
  // "\u00e9" is matched after NFC, so its decomposed form finds it as well.
  CHECK(tokenizer.encode("ae\u0301b") == Ids{0, 7, 1});
  CHECK(tokenizer.encode("\u00e9") == Ids{7});
  CHECK(tokenizer.encode("\xFF") == Ids{});  // read as U+FFFD, which has no token here
  CHECK(tokenizer.decode(Ids{4, 2, 5, 6, 99, -1}) == "abab <|im_end|><x>");
  // Decoded through the byte alphabet, "\u00e9" stands for the lone byte E9: invalid, so U+FFFD.
  CHECK(tokenizer.decode(Ids{7, 0}) == "\uFFFDa");
  CHECK(tokenizer.decode(Ids{4, 2, 5, 6}, true) == "abab <x>");
  CHECK(tokenizer.token_id("<|im_end|>") == 5);
  CHECK(tokenizer.token_id("abab") == 4);
  CHECK_FALSE(tokenizer.token_id("<|MASK|>").has_value());
  CHECK(tokenizer.vocab_size() == 8);
  CHECK_FALSE(tokenizer.eos_token_id().has_value());

  Tokenizer moved = std::move(loaded->result.value());
  CHECK(moved.encode("abab") == Ids{4});
}

TEST_CASE("two tokenizers in one thread keep their cached pre-tokens apart") {
  json fewer_merges = minimal_tokenizer();
  fewer_merges["model"]["merges"].erase(1);
  auto first = load_written(minimal_tokenizer().dump());
  auto second = load_written(fewer_merges.dump());
  REQUIRE(first->result.ok());
  REQUIRE(second->result.ok());
  for (int round = 0; round < 2; ++round) {
    CHECK(first->result->encode("abab") == std::vector<int32_t>{4});
    CHECK(second->result->encode("abab") == std::vector<int32_t>{3, 3});
  }
}

TEST_CASE("tokenizer_config.json: eos_token, chat template check") {
  const std::string file = minimal_tokenizer().dump();
  const std::string good = R"({"eos_token": {"content": "<|im_end|>"}, "chat_template": "{{ '<|im_start|>' }}"})";
  auto loaded = load_written(file, &good);
  REQUIRE(loaded->result.ok());
  CHECK(loaded->result->eos_token_id() == 5);
  CHECK(loaded->result->chat_prompt("hi", true) == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
  CHECK(loaded->result->chat_prompt("hi", false) ==
        "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");

  const std::string corrupt = "{\"eos_token\": ";
  check_error(*load_written(file, &corrupt), "tokenizer_config.json", "not a valid JSON object");
  const std::string unknown_eos = R"({"eos_token": "</s>"})";
  check_error(*load_written(file, &unknown_eos), "tokenizer_config.json", "eos_token '</s>' is not a token");
  const std::string other_template = R"({"chat_template": "{{ bos_token }}{{ messages[0]['content'] }}"})";
  check_error(*load_written(file, &other_template), "tokenizer_config.json", "not Qwen's ChatML template");
}

TEST_CASE("missing, corrupt and truncated tokenizer.json") {
  TemporaryFolder empty;
  Result<Tokenizer> missing = Tokenizer::load(empty.path().string());
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message.find("cannot read " + (empty.path() / "tokenizer.json").string() + ": ") !=
        std::string::npos);

  check_error(*load_written("this is not JSON"), "tokenizer.json", "not valid JSON");
  const std::string whole = minimal_tokenizer().dump();
  check_error(*load_written(whole.substr(0, whole.size() / 2)), "tokenizer.json", "not valid JSON");
  check_error(*load_written("[1, 2]"), "tokenizer.json", "not a JSON object");
}

TEST_CASE("unsupported or inconsistent tokenizer.json contents") {
  struct Case {
    const char* what;
    void (*edit)(json&);
  };
  const Case cases[] = {
      {"model type \"WordPiece\" is not supported", [](json& j) { j["model"]["type"] = "WordPiece"; }},
      {"model.merges is empty", [](json& j) { j["model"]["merges"] = json::array(); }},
      {"model.merges[0] is not \"left right\"", [](json& j) { j["model"]["merges"][0] = "a b c"; }},
      {"model.merges[1] is neither", [](json& j) { j["model"]["merges"][1] = json::array({"ab"}); }},
      {"merge 0 ('a' 'c'): names a token not in the vocabulary", [](json& j) { j["model"]["merges"][0] = "a c"; }},
      {"merge 1 ('ab' 'ab'): the merged token is not in the vocabulary",
       [](json& j) { j["model"]["vocab"].erase("abab"); }},
      {"model.vocab is empty", [](json& j) { j["model"]["vocab"] = json::object(); }},
      {"model.unk_token is not supported", [](json& j) { j["model"]["unk_token"] = "a"; }},
      {"model.dropout is not supported", [](json& j) { j["model"]["dropout"] = 0.1; }},
      {"normalizer \"NFKC\" is not supported",
       [](json& j) {
         j["normalizer"] = {{"type", "NFKC"}};
       }},
      {"pre_tokenizer \"Metaspace\" is not supported",
       [](json& j) {
         j["pre_tokenizer"]["pretokenizers"][0] = {{"type", "Metaspace"}};
       }},
      {"Split behavior \"Removed\" is not supported",
       [](json& j) { j["pre_tokenizer"]["pretokenizers"][0]["behavior"] = "Removed"; }},
      {"pattern does not compile", [](json& j) { j["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "(a"; }},
      {"pre_tokenizer has no ByteLevel step", [](json& j) { j["pre_tokenizer"]["pretokenizers"].erase(1); }},
      {"decoder is not ByteLevel",
       [](json& j) {
         j["decoder"] = {{"type", "WordPiece"}};
       }},
      {"has single_word", [](json& j) { j["added_tokens"][0]["single_word"] = true; }},
      {"added token '<|im_end|>' has id \"five\"", [](json& j) { j["added_tokens"][0]["id"] = "five"; }},
      {"model.vocab token 'b' has id 4294967297", [](json& j) { j["model"]["vocab"]["b"] = 4294967297; }},
      {"type_error", [](json& j) { j["added_tokens"][0]["special"] = "yes"; }},
  };
  for (const Case& c : cases) {
    json file = minimal_tokenizer();
    c.edit(file);
    INFO("case: ", std::string(c.what));
    check_error(*load_written(file.dump()), "tokenizer.json", c.what);
  }
}

}  // namespace
}  // namespace dicebench::models
