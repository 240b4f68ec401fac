// Zeroing device memory before it can reach another job: the reference worker clears its
// allocator's free blocks before the memory goes back to the driver or to a later job's export, and
// every worker clears what it holds before it exits (dicebench_harness/scrub.py plans the ranges
// from torch's allocator); fresh placements are cleared before they are unmapped (fresh_memory.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/base/result.hpp"

namespace dicebench::worker {

// [address, address + size_bytes) of device memory this process may write.
struct DeviceRange {
  std::uintptr_t address = 0;
  std::size_t size_bytes = 0;
};

// Writes zeros over every range on `stream` (a cudaStream_t; 0 for the legacy default stream) of
// `device`, then waits for the stream: when it returns, the zeros are in device memory. Returns
// the bytes zeroed. A range of 0 bytes is skipped.
Result<std::size_t> zero_ranges(const std::vector<DeviceRange>& ranges, int device, std::uintptr_t stream = 0);

}  // namespace dicebench::worker
