// The bandwidth cache: a device's measured memory bandwidth, which sets the physical floor a
// candidate's time cannot beat (evaluation flag below_memory_floor); measured once per device name
// and method, whatever run asks.
#pragma once

#include "core/base/result.hpp"
#include "core/spec/evaluation.hpp"

#include <optional>
#include <string>

namespace dicebench::results {

class Store;

// The latest measurement for a device, by whatever method.
Result<std::optional<Bandwidth>> find_bandwidth(Store& store, const std::string& device_name);
// Stores (or replaces) one measurement of the device in its own transaction.
Result<void> put_bandwidth(Store& store, const std::string& device_name, const Bandwidth& bandwidth);

}  // namespace dicebench::results
