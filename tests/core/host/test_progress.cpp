// The progress line (core/host/progress.hpp): the count, the share, the rate and the ETA; with
// rate_by_batches, the count moves with each item while the rate and ETA wait for a batch's end.
#include "core/host/progress.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <thread>

using dicebench::host::Progress;

namespace {
bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
}  // namespace

TEST_CASE("progress: the count, the share, then a rate and an ETA once something is done") {
  Progress progress("evaluating", 4, "candidates", /*interactive=*/0);
  CHECK(progress.line() == "evaluating: 0/4 candidates (0%)");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  progress.advance();
  const std::string line = progress.line();
  CHECK(has(line, "evaluating: 1/4 candidates (25%), "));
  CHECK(has(line, "candidates/s, ETA "));
  progress.advance(3);
  CHECK_FALSE(has(progress.line(), "ETA"));  // done
  CHECK(has(progress.finish(), "4 candidates in "));
}

TEST_CASE("progress by batches: each sample counts at once, the pace only at a batch's end") {
  Progress progress("generating", 64, "samples", /*interactive=*/0);
  progress.rate_by_batches();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  progress.advance();  // the first sample of a batch that arrives whole at its end
  CHECK(progress.line() == "generating: 1/64 samples (2%)");  // no pace from one sample
  progress.advance(31);
  progress.settle();  // the batch ended: 32 samples in ~50 ms
  const std::string settled = progress.line();
  CHECK(has(settled, "generating: 32/64 samples (50%), "));
  CHECK(has(settled, "ETA "));
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  progress.advance();  // the next batch's first sample moves the count, not the pace
  const std::string next = progress.line();
  CHECK(has(next, "generating: 33/64 samples"));
  const auto rate = [](const std::string& line) {  // "R samples/s"
    const size_t from = line.find("), ") + 3;
    return line.substr(from, line.find(", ETA") - from);
  };
  CHECK(rate(next) == rate(settled));
}
