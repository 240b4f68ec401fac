// The baseline cache: reference timings keyed by problem content hash, GPU (device name), torch
// version and timing method, so later runs on the same setup reuse them instead of re-timing.
#pragma once

#include "core/base/result.hpp"

#include <optional>
#include <string>

namespace dicebench::results {

class Store;

struct BaselineKey {
  std::string problem_hash;
  std::string device_name;
  std::string torch_version;
  std::string method;  // e.g. "eager/cupti_span"
};

struct Baseline {
  BaselineKey key;
  double median_ms = 0, mean_ms = 0, std_ms = 0, min_ms = 0, max_ms = 0, p10_ms = 0, p90_ms = 0;
  int trials = 0;
  std::string created;  // set by the store
};

Result<std::optional<Baseline>> find_baseline(Store& store, const BaselineKey& key);
// Stores (or replaces) one baseline in its own transaction.
Result<void> put_baseline(Store& store, const Baseline& baseline);

}  // namespace dicebench::results
