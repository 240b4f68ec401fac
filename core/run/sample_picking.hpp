// Which sample a slot evaluates next: each slot claims samples from the stage's shared cursor,
// prefetches their candidates, and takes the first whose candidate has compiled, so a slow or
// broken compile holds up no one behind it.
#pragma once

#include "harness/client/evaluator.hpp"
#include "results/rows.hpp"

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <string>
#include <vector>

namespace dicebench::run {

using LoadState = harness::Evaluator::LoadState;

// How a slot's candidates load: prefetch starts one, state says where it stands (an Evaluator's
// prefetch and load_state).
struct CandidateLoader {
  std::function<void(const std::string& candidate)> prefetch;
  std::function<LoadState(const std::string& candidate)> state;
};

// Which of `claimed` to evaluate next: the first that needs no compile wait (no candidate, or its
// candidate ready), polling every `poll` while some are still loading and `stopping` is false;
// else the first.
size_t pick_ready(const std::deque<const results::SampleRow*>& claimed, const std::function<LoadState(const std::string&)>& state,
                  const std::function<bool()>& stopping, std::chrono::milliseconds poll = std::chrono::milliseconds(20));

// One slot's claimed samples.
class ClaimedSamples {
 public:
  // Claims `ahead` + 1 samples of `todo` from `cursor` (shared by the slots).
  ClaimedSamples(const std::vector<results::SampleRow>& todo, std::atomic<size_t>& cursor, CandidateLoader loader, int ahead);

  bool empty() const { return claimed_.empty(); }
  // Removes the sample to evaluate next (pick_ready) and claims another in its place.
  const results::SampleRow& take(const std::function<bool()>& stopping);

 private:
  void claim();

  const std::vector<results::SampleRow>& todo_;
  std::atomic<size_t>& cursor_;
  CandidateLoader loader_;
  std::deque<const results::SampleRow*> claimed_;
};

}  // namespace dicebench::run
