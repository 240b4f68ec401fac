// The bandwidth cache: a device's measured memory bandwidth, which sets the physical floor a
// candidate's time cannot beat (evaluation flag below_memory_floor); measured once per device name
// and method, whatever run asks.
#pragma once

#include "core/base/result.hpp"

#include <optional>
#include <string>

namespace dicebench::results {

class Store;

struct Bandwidth {
  std::string device_name;
  std::string method;  // how it was measured, e.g. "copy_1GiB_best_of_10"
  double bytes_per_second = 0;
  std::string created;  // set by the store
};

// The latest measurement for a device, by whatever method.
Result<std::optional<Bandwidth>> find_bandwidth(Store& store, const std::string& device_name);
// Stores (or replaces) one measurement in its own transaction.
Result<void> put_bandwidth(Store& store, const Bandwidth& bandwidth);

}  // namespace dicebench::results
