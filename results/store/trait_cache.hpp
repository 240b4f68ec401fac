// The problem trait cache: a problem's degenerate traits (core/spec/vocabulary.toml), judged from its
// reference alone, keyed by problem content hash, device name and tolerance mode, so that each
// problem is checked once per device and tolerance, whatever run asks.
#pragma once

#include "core/base/result.hpp"
#include "core/spec/evaluation.hpp"

#include <optional>
#include <string>

namespace dicebench::results {

class Store;

struct TraitKey {
  std::string problem_hash;
  std::string device_name;  // the GPU's name, or the CPU's
  std::string tolerance;    // the tolerance mode the traits were judged with
};

Result<std::optional<ProblemTraits>> find_traits(Store& store, const TraitKey& key);
// Stores (or replaces) one problem's traits in its own transaction.
Result<void> put_traits(Store& store, const TraitKey& key, const ProblemTraits& traits);

}  // namespace dicebench::results
