// Fuzz target: extracting the candidate program from a model's completion (first and last code
// block). An extracted candidate is a piece of the completion, stripped.
#include "benchmarks/kernelbench/extract.hpp"
#include "tests/fuzz/fuzz_support.hpp"

using namespace dicebench;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view completion = fuzz::as_text(data, size);
  for (const auto which : {kernelbench::Which::First, kernelbench::Which::Last}) {
    const auto candidate = kernelbench::extract_candidate(completion, which);
    if (!candidate) continue;
    fuzz::check(completion.find("```") != std::string_view::npos, "a candidate from a completion without a fence");
    fuzz::check(candidate->size() + 6 <= completion.size(), "a candidate longer than its completion");
    fuzz::check(completion.find(*candidate) != std::string_view::npos,
                "a candidate that is not a piece of its completion");
  }
  return 0;
}
