// PCRE2-backed Split pre-tokenizer step (see split_regex.hpp).
#include "models/tokenizer/split_regex.hpp"

#include "models/tokenizer/utf8.hpp"

#include <pcre2.h>

namespace dicebench::models {

struct SplitRegex::Code {
  pcre2_code* code = nullptr;
  bool jit = false;
  ~Code() { pcre2_code_free(code); }
};

namespace {

// One match-data block per thread, holding only the whole match: it serves every pattern.
pcre2_match_data* thread_match_data() {
  thread_local std::unique_ptr<pcre2_match_data, void (*)(pcre2_match_data*)> data(pcre2_match_data_create(1, nullptr),
                                                                                   &pcre2_match_data_free);
  return data.get();
}

}  // namespace

Result<SplitRegex> SplitRegex::compile(const std::string& pattern, bool literal) {
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  const uint32_t options = PCRE2_UTF | PCRE2_UCP | (literal ? PCRE2_LITERAL : 0);
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), options, &error_code,
                                   &error_offset, nullptr);
  if (!code) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error_code, message, sizeof message);
    return make_error("the pre-tokenizer pattern does not compile at offset " + std::to_string(error_offset) + ": " +
                      reinterpret_cast<const char*>(message));
  }
  auto owned = std::make_shared<Code>();
  owned->code = code;
  owned->jit = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
  SplitRegex regex;
  regex.code_ = std::move(owned);
  return regex;
}

void SplitRegex::split(std::string_view text, std::vector<std::string_view>& pieces) const {
  pcre2_match_data* data = thread_match_data();
  const auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t piece_start = 0, search_from = 0;
  while (search_from < text.size()) {
    int rc = PCRE2_ERROR_JIT_STACKLIMIT;
    if (code_->jit) rc = pcre2_jit_match(code_->code, subject, text.size(), search_from, 0, data, nullptr);
    // The interpreter also covers what the JIT gives up on (its stack limit, on huge inputs).
    if (rc < 0 && rc != PCRE2_ERROR_NOMATCH)
      rc = pcre2_match(code_->code, subject, text.size(), search_from, PCRE2_NO_UTF_CHECK, data, nullptr);
    if (rc < 0) break;  // no further match: the rest is one piece
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(data);
    const size_t start = ovector[0], end = ovector[1];
    if (start > piece_start) pieces.push_back(text.substr(piece_start, start - piece_start));
    if (end > start) {
      pieces.push_back(text.substr(start, end - start));
      piece_start = search_from = end;
    } else {  // an empty match: step over one character, which joins the next gap
      piece_start = start;
      search_from = start + utf8::next(text, start).length;
    }
  }
  if (piece_start < text.size()) pieces.push_back(text.substr(piece_start));
}

}  // namespace dicebench::models
