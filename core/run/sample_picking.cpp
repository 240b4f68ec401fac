// Claiming samples for a slot and picking the next one whose candidate is ready.
#include "core/run/sample_picking.hpp"

#include <thread>

namespace dicebench::run {

size_t pick_ready(const std::deque<const results::SampleRow*>& claimed, const std::function<LoadState(const std::string&)>& state,
                  const std::function<bool()>& stopping, std::chrono::milliseconds poll) {
  while (!stopping()) {
    bool loading = false;
    for (size_t i = 0; i < claimed.size(); ++i) {
      const auto& candidate = claimed[i]->candidate;
      if (!candidate) return i;
      const auto now = state(*candidate);
      if (now == LoadState::ready) return i;
      loading = loading || now == LoadState::loading;
    }
    if (!loading) break;
    std::this_thread::sleep_for(poll);
  }
  return 0;
}

ClaimedSamples::ClaimedSamples(const std::vector<results::SampleRow>& todo, std::atomic<size_t>& cursor, CandidateLoader loader,
                               int ahead)
    : todo_(todo), cursor_(cursor), loader_(std::move(loader)) {
  for (int i = 0; i <= ahead; ++i) claim();
}

void ClaimedSamples::claim() {
  const size_t index = cursor_++;
  if (index >= todo_.size()) return;
  const results::SampleRow& sample = todo_[index];
  claimed_.push_back(&sample);
  if (sample.candidate) loader_.prefetch(*sample.candidate);
}

const results::SampleRow& ClaimedSamples::take(const std::function<bool()>& stopping) {
  const auto picked = claimed_.begin() + static_cast<std::ptrdiff_t>(pick_ready(claimed_, loader_.state, stopping));
  const results::SampleRow& sample = **picked;
  claimed_.erase(picked);
  claim();
  return sample;
}

}  // namespace dicebench::run
