// Device memory at virtual addresses this process has never used: a timed call's inputs placed
// there cannot be where an earlier call's inputs were, so a candidate that captured a CUDA graph on
// an earlier call's input pointers, and replays it without copying the new inputs in, reads stale
// bytes (harness/PROTOCOL.md, "Fresh placement"). Address ranges are reserved with the driver's
// virtual memory calls and never given back while the process lives; the physical memory behind
// one is released when the caller is done with it, so the memory a job holds stays bounded; it is
// zeroed first, so no later allocation of any process finds the inputs it held (device_scrub.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/base/result.hpp"

namespace dicebench::worker {

struct FreshRegion {
  std::uintptr_t address = 0;  // the first byte, aligned to the driver's allocation granularity
  std::size_t size_bytes = 0;  // mapped bytes (the request rounded up to the granularity)
  std::uint64_t handle = 0;    // the physical allocation (CUmemGenericAllocationHandle)
};

// Maps at least `bytes` of `device`'s memory, readable and writable from it, at an address range
// that overlaps none of `avoid` ([first, end) pairs) nor any range an earlier call returned.
Result<FreshRegion> map_fresh(int device, std::size_t bytes,
                              const std::vector<std::pair<std::uintptr_t, std::uintptr_t>>& avoid);

// Unmaps a region after the device has finished every use of it and zeroed it, and releases its
// physical memory; its address range stays reserved, so no later allocation of this process lands there.
Result<void> unmap_fresh(const FreshRegion& region, int device);

// The regions map_fresh mapped that unmap_fresh has not unmapped yet (a worker zeroes them before it
// exits: a tensor may still use one).
std::vector<FreshRegion> mapped_fresh();

}  // namespace dicebench::worker
