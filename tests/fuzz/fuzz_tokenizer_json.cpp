// Fuzz target: a tokenizer folder (one input: tokenizer.json, a NUL byte, then
// tokenizer_config.json when there is one). A tokenizer that loads encodes and decodes text.
#include "models/tokenizer/tokenizer.hpp"
#include "tests/fuzz/fuzz_support.hpp"

using namespace dicebench;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::clear_scratch_folder();
  const auto [tokenizer_json, tokenizer_config] = fuzz::split_at_nul(fuzz::as_text(data, size));
  fuzz::write_scratch_file("tokenizer.json", tokenizer_json);
  if (!tokenizer_config.empty()) fuzz::write_scratch_file("tokenizer_config.json", tokenizer_config);
  auto tokenizer = models::Tokenizer::load(fuzz::scratch_folder().string());
  if (!tokenizer) {
    fuzz::check_one_line(tokenizer.error().message);
    return 0;
  }
  for (std::string_view text :
       {std::string_view("hello world, <|im_end|>\n\tab ba\xc3\xa9"), tokenizer_json.substr(0, 256)}) {
    const std::vector<int32_t> ids = tokenizer->encode(text);
    for (int32_t id : ids)
      fuzz::check(id >= 0 && id < tokenizer->vocab_size(), "encode gave an id outside the vocabulary");
    (void)tokenizer->decode(ids);
    (void)tokenizer->decode(ids, /*skip_special_tokens=*/true);
  }
  const int32_t outside[] = {-1, tokenizer->vocab_size(), 0, tokenizer->vocab_size() - 1, INT32_MAX, INT32_MIN};
  (void)tokenizer->decode(outside);
  if (auto eos = tokenizer->eos_token_id())
    fuzz::check(*eos >= 0 && *eos < tokenizer->vocab_size(), "eos_token_id outside the vocabulary");
  return 0;
}
