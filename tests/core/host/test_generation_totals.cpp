// Unit tests of the run summary's generation totals (tokens, cache hits, failed requests) read from
// samples' gen_stats.
#include "core/host/generation_totals.hpp"

#include <doctest/doctest.h>

using dicebench::host::GenerationTotals;

TEST_CASE("generation totals: tokens, tokens per second over generated samples, cache hits and failures") {
  GenerationTotals totals;
  CHECK(totals.summary(1.0).empty());
  totals.add(R"({"source":"replay","file":"x"})");  // no figures: adds nothing
  totals.add("not json");
  CHECK(totals.summary(1.0).empty());

  totals.add(R"({"prompt_tokens":10,"completion_tokens":100,"cached":false})");
  totals.add(R"({"prompt_tokens":10,"completion_tokens":50,"cached":true})");
  totals.add(R"({"error":"HTTP 400 from the server: 'no'","cached":false})");
  CHECK(totals.prompt_tokens == 20);
  CHECK(totals.completion_tokens == 150);
  CHECK(totals.generated_tokens == 100);
  CHECK(totals.cached == 1);
  CHECK(totals.failed == 1);
  const std::string summary = totals.summary(2.0);
  CHECK_MESSAGE(summary.find("tokens: 20 prompt, 150 completion; 50.0 completion tokens/s generated (100 in 2.0 s)") !=
                    std::string::npos,
                summary);
  CHECK(summary.find("request cache: 1 answer(s)") != std::string::npos);
  CHECK(summary.find("failed requests: 1") != std::string::npos);

  GenerationTotals all_cached;
  all_cached.add(R"({"prompt_tokens":3,"completion_tokens":4,"cached":true})");
  CHECK(all_cached.summary(0.01).find("none generated now") != std::string::npos);
}
