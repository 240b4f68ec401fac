// The baseline cache: reference timings keyed by problem content hash, GPU (device name), torch
// version and timing method, so later runs on the same setup reuse them instead of re-timing.
#pragma once

#include "core/base/result.hpp"
#include "core/spec/evaluation.hpp"

#include <optional>
#include <string>

namespace dicebench::results {

class Store;

// Its key (core/spec/evaluation.toml's BaselineKey): problem, device, torch and method ("eager/cupti_span/...").
using BaselineKey = dicebench::BaselineKey;

// The stored baseline (its stop reason and warm calls are not kept: "" and 0).
Result<std::optional<Timing>> find_baseline(Store& store, const BaselineKey& key);
// Stores (or replaces) one baseline in its own transaction.
Result<void> put_baseline(Store& store, const BaselineKey& key, const Timing& baseline);

}  // namespace dicebench::results
