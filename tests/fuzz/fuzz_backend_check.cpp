// Fuzz target: the suite's static backend check over a candidate's source (any bytes), for every
// backend. Its reading of the source is bounded by the source, and a finding is one line.
#include "benchmarks/kernelbench/backend_check.hpp"
#include "benchmarks/kernelbench/python_source.hpp"
#include "tests/fuzz/fuzz_support.hpp"

using namespace dicebench;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view source = fuzz::as_text(data, size);
  size_t tokens = 0;
  for (const auto& line : kernelbench::python_lines(source)) {
    fuzz::check(!line.tokens.empty(), "an empty logical line");
    tokens += line.tokens.size();
  }
  fuzz::check(tokens <= source.size(), "more tokens than bytes");
  for (const auto& backend : kernelbench::kKernelBackends)
    if (const auto why = kernelbench::backend_unused(backend, source)) fuzz::check_one_line(*why);
  return 0;
}
