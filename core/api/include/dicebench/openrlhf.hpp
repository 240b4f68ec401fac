// OpenRLHF's remote reward hands over each sample as its whole query (prompt + response, decoded)
// beside its prompt: the response judged is what follows the prompt. One definition for every
// front end that takes OpenRLHF's shape (dicebench serve's /v1/openrlhf, the Python reward_func).
#pragma once

#include <string>
#include <string_view>

namespace dicebench {

struct OpenRlhfResponse {
  std::string text;          // the response, without the special tokens that end it
  bool prompt_found = true;  // false: the query does not hold its prompt, and is taken whole
};

// What follows the prompt in the query: after its exact text where the query starts with it, else
// after its last 64, 32 or 16 bytes where they lie within the prompt's length (plus 16 bytes that
// decoding may have added) of the query's start, the last such place (a prompt decoding changed,
// or OpenRLHF truncated at the left; the end of a multi-turn prompt's final header); else the whole
// query. Then the special tokens at its end go (<|...|>, <｜...｜>, </s>, <eos>, <end_of_turn>,
// with the ASCII white space between and after them).
OpenRlhfResponse openrlhf_response(std::string_view query, std::string_view prompt);

}  // namespace dicebench
