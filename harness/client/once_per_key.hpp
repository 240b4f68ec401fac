// A value per key that several threads need and one of them computes: the first caller of a key
// computes it while later callers wait for its result. The evaluators of a run's CPU slots share
// their problems' baselines through one (they time the reference on the same cores, so each timing
// its own would rest a run's speedups on as many baselines as slots, timed while the slots compete).
#pragma once

#include "core/base/result.hpp"

#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>

namespace dicebench::harness {

// A value, and whether this call computed it (rather than found it known).
template <class Value>
struct Got {
  Value value;
  bool computed = false;
};

template <class Value>
class OncePerKey {
 public:
  // The value of `key`: known already, or computed by `compute` in this thread, first come, while
  // later callers wait. A failure is not kept: the next caller, or one that waited, computes it again.
  Result<Got<Value>> get(const std::string& key, const std::function<Result<Value>()>& compute) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return known_.count(key) || !computing_.count(key); });
    if (const auto it = known_.find(key); it != known_.end()) return Got<Value>{it->second, false};
    computing_.insert(key);
    lock.unlock();
    Result<Value> value = compute();
    lock.lock();
    computing_.erase(key);
    if (value) known_.emplace(key, *value);
    changed_.notify_all();
    if (!value) return value.error();
    return Got<Value>{std::move(*value), true};
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, Value> known_;
  std::set<std::string> computing_;
};

}  // namespace dicebench::harness
