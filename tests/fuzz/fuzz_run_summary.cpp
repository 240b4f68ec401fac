// Fuzz target: a run summary file (a gate baseline or a comparison side). One that reads is
// written again, and what is written reads back.
#include "results/report/summary_file.hpp"
#include "tests/fuzz/fuzz_support.hpp"

using namespace dicebench;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = fuzz::write_scratch_file("summary.json", fuzz::as_text(data, size));
  auto run = results::read_summary(path);
  if (!run) {
    fuzz::check_one_line(run.error().message);
    return 0;
  }
  const auto rewritten = fuzz::write_scratch_file("rewritten.json", results::write_summary(*run));
  auto again = results::read_summary(rewritten);
  fuzz::check(again.ok(), again.ok() ? "" : "a summary this build wrote does not read: " + again.error().message);
  return 0;
}
