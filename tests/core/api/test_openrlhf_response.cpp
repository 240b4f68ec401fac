// The response in an OpenRLHF query (dicebench/openrlhf.hpp), as serve's /v1/openrlhf and the
// Python reward_func take it: after the prompt, found by its end where decoding changed it or
// OpenRLHF cut it at the left, without the special tokens that end it.
#include "dicebench/openrlhf.hpp"

#include <doctest/doctest.h>

#include <string>

using dicebench::openrlhf_response;

namespace {

const std::string kPrompt =
    "<|im_start|>system\nYou write CUDA kernels.<|im_end|>\n<|im_start|>user\nWrite ModelNew for this "
    "problem, in one ```python block.<|im_end|>\n<|im_start|>assistant\n";

std::string response(const std::string& query, const std::string& prompt = kPrompt) {
  const auto found = openrlhf_response(query, prompt);
  CHECK(found.prompt_found);
  return found.text;
}

}  // namespace

TEST_CASE("the response follows the prompt, without the special tokens that end it") {
  CHECK(response(kPrompt + "```python\nx\n```<|im_end|>") == "```python\nx\n```");
  CHECK(response(kPrompt + "done </s>\n") == "done");
  CHECK(response(kPrompt + "a<|eot_id|><|endoftext|>") == "a");
  CHECK(response(kPrompt + "a <end_of_turn>\n<eos>") == "a");
  CHECK(response(kPrompt + "a<\xef\xbd\x9c"
                           "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>") == "a");
  // Not special tokens: kept as written (white space too, where no token ends the response).
  CHECK(response(kPrompt + "a <|not a token|>") == "a <|not a token|>");
  CHECK(response(kPrompt + "x <| |>") == "x <| |>");
  CHECK(response(kPrompt + "a|>") == "a|>");
  CHECK(response(kPrompt + "answer  \n") == "answer  \n");
  CHECK(response(kPrompt + "<|" + std::string(65, 'n') + "|>") == "<|" + std::string(65, 'n') + "|>");
  CHECK(response(kPrompt + "<|" + std::string(64, 'n') + "|>").empty());
}

TEST_CASE("a prompt cut at its start, or changed by decoding, is found by its end") {
  CHECK(response(kPrompt.substr(40) + "answer") == "answer");  // OpenRLHF truncates long prompts from the left
  CHECK(response(" " + kPrompt + "answer") == "answer");       // decoding added a space
  const std::string two_turns = kPrompt + "earlier answer<|im_end|>\n" + kPrompt;
  CHECK(response(two_turns.substr(30) + "answer", two_turns) == "answer");  // the last turn's header
  // The prompt's end beyond its length (plus 16 bytes) from the start is a response's text, not the prompt's.
  const auto far =
      openrlhf_response(std::string(kPrompt.size() + 40, 'x') + kPrompt.substr(kPrompt.size() - 64) + "a", kPrompt);
  CHECK_FALSE(far.prompt_found);
}

TEST_CASE("a query without its prompt is taken whole, and says so") {
  const auto whole = openrlhf_response("no prompt here<|im_end|>", kPrompt);
  CHECK_FALSE(whole.prompt_found);
  CHECK(whole.text == "no prompt here");
  const auto no_prompt = openrlhf_response("all of it", "");
  CHECK(no_prompt.prompt_found);
  CHECK(no_prompt.text == "all of it");
}
