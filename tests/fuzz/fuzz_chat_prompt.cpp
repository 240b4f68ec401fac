// Fuzz target: the chat template's input, a user message (the input's first byte picks thinking or
// not, the rest is the message), put into Qwen3's chat prompt and through a byte-level BPE
// tokenizer whose vocabulary holds every byte: decode(encode(prompt)) must give the prompt back
// (with invalid UTF-8 read as U+FFFD), and the prompt must start with <|im_start|>.
#include "models/tokenizer/byte_level.hpp"
#include "models/tokenizer/tokenizer.hpp"
#include "models/tokenizer/utf8.hpp"
#include "tests/fuzz/fuzz_support.hpp"

#include <nlohmann/json.hpp>

using namespace dicebench;

namespace {

// Every byte, a few merges, ChatML's special tokens and Qwen3's think tags, split as Qwen2 splits.
std::string full_byte_level_tokenizer() {
  nlohmann::json vocab = nlohmann::json::object();
  int32_t next_id = 0;
  for (int byte = 0; byte < 256; ++byte)
    vocab[models::byte_level::from_bytes(std::string(1, static_cast<char>(byte)))] = next_id++;
  nlohmann::json merges = nlohmann::json::array();
  for (const auto& [left, right] :
       {std::pair{"Ġ", "t"}, {"i", "n"}, {"Ġt", "h"}, {"<", "|"}, {"in", "g"}, {"Ċ", "Ċ"}}) {
    merges.push_back(std::string(left) + " " + right);
    vocab[std::string(left) + right] = next_id++;
  }
  nlohmann::json added = nlohmann::json::array();
  for (const auto& [content, special] :
       {std::pair{"<|im_start|>", true}, {"<|im_end|>", true}, {"<think>", false}, {"</think>", false}})
    added.push_back({{"id", next_id++},
                     {"content", content},
                     {"single_word", false},
                     {"lstrip", false},
                     {"rstrip", false},
                     {"normalized", false},
                     {"special", special}});
  const nlohmann::json byte_level = {
      {"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", false}};
  const std::string qwen2_split =
      R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
  const nlohmann::json tokenizer = {
      {"version", "1.0"},
      {"added_tokens", added},
      {"normalizer", nullptr},
      {"pre_tokenizer",
       {{"type", "Sequence"},
        {"pretokenizers",
         {{{"type", "Split"}, {"pattern", {{"Regex", qwen2_split}}}, {"behavior", "Isolated"}, {"invert", false}},
          byte_level}}}},
      {"decoder", byte_level},
      {"model",
       {{"type", "BPE"},
        {"dropout", nullptr},
        {"unk_token", nullptr},
        {"continuing_subword_prefix", ""},
        {"end_of_word_suffix", ""},
        {"fuse_unk", false},
        {"byte_fallback", false},
        {"ignore_merges", false},
        {"vocab", vocab},
        {"merges", merges}}}};
  return tokenizer.dump();
}

const models::Tokenizer& tokenizer() {
  static const models::Tokenizer loaded = [] {
    fuzz::write_scratch_file("tokenizer.json", full_byte_level_tokenizer());
    auto result = models::Tokenizer::load(fuzz::scratch_folder().string());
    fuzz::check(result.ok(), result.ok() ? "" : "the fuzz target's own tokenizer: " + result.error().message);
    return std::move(result).value();
  }();
  return loaded;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool thinking = (data[0] & 1) != 0;
  const std::string prompt = tokenizer().chat_prompt(fuzz::as_text(data + 1, size - 1), thinking);
  const std::vector<int32_t> ids = tokenizer().encode(prompt);
  fuzz::check(!ids.empty() && ids.front() == tokenizer().token_id("<|im_start|>"),
              "the prompt does not start with <|im_start|>");
  fuzz::check(tokenizer().decode(ids) == models::utf8::to_valid(prompt), "decode(encode(prompt)) is not the prompt");
  return 0;
}
