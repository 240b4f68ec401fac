// Fidelity of the tokenizer against Hugging Face `tokenizers`: a tiny Qwen-style tokenizer is
// trained at test time (tools/tiny_model/make_tokenizer.py), and our encodings, decodings and
// chat prompts must equal the reference's token for token and byte for byte. With
// DICEBENCH_QWEN_TOKENIZER_DIR set to a real Qwen3 folder, the same comparison runs on it.
#include "models/tokenizer/tokenizer.hpp"
#include "tokenizer_test_support.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <numeric>
#include <thread>

namespace dicebench::models {
namespace {

using testing::TemporaryFolder;

// Compares everything reference.json holds for the corpus.
void check_against_reference(const nlohmann::json& reference) {
  Result<Tokenizer> loaded = Tokenizer::load(reference["tokenizer_dir"].get<std::string>());
  REQUIRE_MESSAGE(loaded.ok(), (loaded.ok() ? "" : loaded.error().message));
  const Tokenizer& tokenizer = loaded.value();

  CHECK(tokenizer.vocab_size() == reference["vocab_size"].get<int32_t>());
  for (const auto& [token, id] : reference["token_ids"].items()) {
    INFO("token ", token);
    CHECK(tokenizer.token_id(token) == id.get<int32_t>());
  }

  size_t total_ids = 0, total_bytes = 0;
  for (const nlohmann::json& encoding : reference["encodings"]) {
    const std::string text = encoding["text"].get<std::string>();
    const std::vector<int32_t> expected = encoding["ids"].get<std::vector<int32_t>>();
    INFO("text: ", nlohmann::json(text).dump());
    const std::vector<int32_t> ids = tokenizer.encode(text);
    CHECK_MESSAGE(ids == expected, "ours ", nlohmann::json(ids).dump(), "\nhf   ", nlohmann::json(expected).dump());
    CHECK(tokenizer.encode(text) == ids);  // again, now through the pre-token cache
    CHECK(tokenizer.decode(expected) == encoding["decoded"].get<std::string>());
    CHECK(tokenizer.decode(expected, true) == encoding["decoded_skip"].get<std::string>());
    total_ids += expected.size();
    total_bytes += text.size();
  }
  for (const nlohmann::json& decode : reference["decodes"]) {
    const std::vector<int32_t> ids = decode["ids"].get<std::vector<int32_t>>();
    INFO("ids: ", decode["ids"].dump());
    CHECK(tokenizer.decode(ids) == decode["decoded"].get<std::string>());
    CHECK(tokenizer.decode(ids, true) == decode["decoded_skip"].get<std::string>());
  }
  // The corpus must exercise merges, or equal id lists would prove little.
  CHECK(total_ids * 2 < total_bytes);

  // Several threads encoding at once (each with its own pre-token cache) agree with the reference.
  std::vector<size_t> mismatches(4, 0);
  {
    std::vector<std::jthread> threads;
    for (size_t t = 0; t < mismatches.size(); ++t)
      threads.emplace_back([&, t] {
        for (int round = 0; round < 3; ++round)
          for (const nlohmann::json& encoding : reference["encodings"])
            if (tokenizer.encode(encoding["text"].get<std::string>()) != encoding["ids"].get<std::vector<int32_t>>())
              ++mismatches[t];
      });
  }
  CHECK(std::accumulate(mismatches.begin(), mismatches.end(), size_t{0}) == 0);
}

void check_chat_prompts(const nlohmann::json& reference) {
  Result<Tokenizer> loaded = Tokenizer::load(reference["tokenizer_dir"].get<std::string>());
  REQUIRE_MESSAGE(loaded.ok(), (loaded.ok() ? "" : loaded.error().message));
  REQUIRE(reference["chat"].size() >= 2);
  for (const nlohmann::json& chat : reference["chat"]) {
    const std::string message = chat["message"].get<std::string>();
    const bool thinking = chat["thinking"].get<bool>();
    INFO("message: ", nlohmann::json(message).dump(), " thinking: ", thinking);
    CHECK(loaded->chat_prompt(message, thinking) == chat["prompt"].get<std::string>());
  }
}

const char* real_qwen_folder() { return std::getenv("DICEBENCH_QWEN_TOKENIZER_DIR"); }

TEST_CASE("encodings and decodings equal Hugging Face tokenizers' (merges as pairs)") {
  TemporaryFolder folder;
  const nlohmann::json reference = testing::run_hf_reference(folder.path(), "--merges-format pairs");
  const std::string file = testing::read_text(folder.path() / "tokenizer" / "tokenizer.json");
  REQUIRE(file.find("\"merges\": [\n   [") != std::string::npos);  // really the pair format
  check_against_reference(reference);
}

TEST_CASE("encodings and decodings equal Hugging Face tokenizers' (merges as strings)") {
  TemporaryFolder folder;
  const nlohmann::json reference = testing::run_hf_reference(folder.path(), "--merges-format strings");
  const std::string file = testing::read_text(folder.path() / "tokenizer" / "tokenizer.json");
  REQUIRE(file.find("\"merges\": [\n   \"") != std::string::npos);  // really the string format
  check_against_reference(reference);
}

TEST_CASE("the chat prompt equals the rendered Qwen3-style chat template") {
  TemporaryFolder folder;
  check_chat_prompts(testing::run_hf_reference(folder.path(), ""));
}

TEST_CASE("a real Qwen tokenizer folder, where DICEBENCH_QWEN_TOKENIZER_DIR names one" *
          doctest::skip(real_qwen_folder() == nullptr)) {
  TemporaryFolder folder;
  const nlohmann::json reference =
      testing::run_hf_reference(folder.path(), std::string("--tokenizer-dir '") + real_qwen_folder() + "'");
  check_against_reference(reference);
  check_chat_prompts(reference);
}

}  // namespace
}  // namespace dicebench::models
