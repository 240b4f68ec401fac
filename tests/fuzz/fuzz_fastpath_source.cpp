// Fuzz target: the fast path's source scanner and splitter on a candidate's CUDA/C++ text. Tokens
// are ordered, disjoint ranges of the source; the two programs a split produces scan again.
#include "harness/fastpath/src/source_scanner.hpp"
#include "harness/fastpath/src/source_splitter.hpp"
#include "tests/fuzz/fuzz_support.hpp"

using namespace dicebench;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view source = fuzz::as_text(data, size);
  auto tokens = fastpath::scan_source(source);
  if (!tokens) fuzz::check_one_line(tokens.error().message);
  if (tokens) {
    size_t previous_end = 0;
    int previous_line = 1;
    for (const auto& token : *tokens) {
      fuzz::check(previous_end <= token.begin && token.begin < token.end && token.end <= source.size(),
                  "a token outside the source or overlapping the one before");
      fuzz::check(token.line >= previous_line, "token lines going backwards");
      previous_end = token.end;
      previous_line = token.line;
      if (token.kind != fastpath::TokenKind::Preprocessor) continue;
      const auto directive = fastpath::parse_directive(fastpath::token_text(source, token));
      if (directive.name == "include") (void)fastpath::parse_include(directive.rest);
    }
  }
  (void)fastpath::is_declarations_only(source);
  auto split = fastpath::split_cuda_source(source);
  if (!split) {
    fuzz::check_one_line(split.error().message);
    return 0;
  }
  fuzz::check(fastpath::scan_source(split->device_source).ok(), "the device part of a split does not scan");
  fuzz::check(fastpath::scan_source(split->host_source).ok(), "the host part of a split does not scan");
  for (const auto& header : split->device_includes) (void)fastpath::classify_header(header);
  return 0;
}
