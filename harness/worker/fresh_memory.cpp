// Device memory at never-used virtual addresses, through the driver's virtual memory management
// (fresh_memory.hpp).
#include "harness/worker/fresh_memory.hpp"

#include "harness/worker/device_scrub.hpp"

#include <cuda.h>  // the driver API's types only; the functions come through cudart's entry points
#include <cuda_runtime_api.h>

#include <algorithm>
#include <mutex>
#include <string>

namespace dicebench::worker {
namespace {

// Every address range map_fresh reserved in this process: reserved until the process ends.
std::mutex reserved_mutex;
std::vector<std::pair<std::uintptr_t, std::uintptr_t>> reserved_ranges;
// The regions mapped now (under reserved_mutex too).
std::vector<FreshRegion> mapped_regions;

// Reservations made and refused (they overlapped a range to avoid) before one is accepted.
constexpr int kReserveAttempts = 64;

template <class Fn>
Fn driver_function(const char* name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess)
    return nullptr;
  return reinterpret_cast<Fn>(fn);
}

struct Driver {
  CUresult (*granularity)(size_t*, const CUmemAllocationProp*, CUmemAllocationGranularity_flags) =
      driver_function<decltype(granularity)>("cuMemGetAllocationGranularity");
  CUresult (*reserve)(CUdeviceptr*, size_t, size_t, CUdeviceptr,
                      unsigned long long) = driver_function<decltype(reserve)>("cuMemAddressReserve");
  CUresult (*create)(CUmemGenericAllocationHandle*, size_t, const CUmemAllocationProp*,
                     unsigned long long) = driver_function<decltype(create)>("cuMemCreate");
  CUresult (*map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
                  unsigned long long) = driver_function<decltype(map)>("cuMemMap");
  CUresult (*set_access)(CUdeviceptr, size_t, const CUmemAccessDesc*,
                         size_t) = driver_function<decltype(set_access)>("cuMemSetAccess");
  CUresult (*unmap)(CUdeviceptr, size_t) = driver_function<decltype(unmap)>("cuMemUnmap");
  CUresult (*release)(CUmemGenericAllocationHandle) = driver_function<decltype(release)>("cuMemRelease");

  bool complete() const { return granularity && reserve && create && map && set_access && unmap && release; }
};

const Driver& driver() {
  static const Driver d;
  return d;
}

Error driver_error(const char* what, CUresult result) {
  return make_error(ErrorKind::harness_failure, std::string(what) + " failed with CUresult " + std::to_string(result));
}

bool overlaps(std::uintptr_t first, std::uintptr_t end,
              const std::vector<std::pair<std::uintptr_t, std::uintptr_t>>& ranges) {
  for (const auto& [a, b] : ranges)
    if (first < b && a < end) return true;
  return false;
}

CUmemAllocationProp device_memory(int device) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  return prop;
}

}  // namespace

Result<FreshRegion> map_fresh(int device, std::size_t bytes,
                              const std::vector<std::pair<std::uintptr_t, std::uintptr_t>>& avoid) {
  const Driver& d = driver();
  if (!d.complete()) return make_error("the driver has no virtual memory management calls (cuMemAddressReserve, ...)");
  if (cudaError_t error = cudaSetDevice(device); error != cudaSuccess)
    return make_error(std::string("cudaSetDevice: ") + cudaGetErrorName(error));
  const CUmemAllocationProp prop = device_memory(device);
  size_t granularity = 0;
  if (CUresult r = d.granularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED); r != CUDA_SUCCESS)
    return driver_error("cuMemGetAllocationGranularity", r);
  const size_t size = ((std::max<size_t>(bytes, 1) + granularity - 1) / granularity) * granularity;

  std::lock_guard lock(reserved_mutex);
  CUdeviceptr address = 0;
  for (int attempt = 0;; ++attempt) {
    if (attempt == kReserveAttempts)
      return make_error("no fresh address range after " + std::to_string(kReserveAttempts) + " reservations");
    CUdeviceptr candidate = 0;
    if (CUresult r = d.reserve(&candidate, size, granularity, 0, 0); r != CUDA_SUCCESS)
      return driver_error("cuMemAddressReserve", r);
    const auto first = static_cast<std::uintptr_t>(candidate);
    const bool used = overlaps(first, first + size, avoid) || overlaps(first, first + size, reserved_ranges);
    reserved_ranges.emplace_back(first, first + size);  // refused or not, it stays reserved: never handed out again
    if (!used) {
      address = candidate;
      break;
    }
  }
  CUmemGenericAllocationHandle handle = 0;
  if (CUresult r = d.create(&handle, size, &prop, 0); r != CUDA_SUCCESS) return driver_error("cuMemCreate", r);
  if (CUresult r = d.map(address, size, 0, handle, 0); r != CUDA_SUCCESS) {
    d.release(handle);
    return driver_error("cuMemMap", r);
  }
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  if (CUresult r = d.set_access(address, size, &access, 1); r != CUDA_SUCCESS) {
    d.unmap(address, size);
    d.release(handle);
    return driver_error("cuMemSetAccess", r);
  }
  const FreshRegion region{static_cast<std::uintptr_t>(address), size, static_cast<std::uint64_t>(handle)};
  mapped_regions.push_back(region);
  return region;
}

Result<void> unmap_fresh(const FreshRegion& region, int device) {
  const Driver& d = driver();
  if (!d.complete()) return make_error("the driver has no virtual memory management calls");
  if (cudaError_t error = cudaSetDevice(device); error != cudaSuccess)
    return make_error(std::string("cudaSetDevice: ") + cudaGetErrorName(error));
  // Work queued on any stream may still read the region: the device finishes it first.
  if (cudaError_t error = cudaDeviceSynchronize(); error != cudaSuccess)
    return make_error(std::string("cudaDeviceSynchronize: ") + cudaGetErrorName(error));
  // The physical memory goes back to the driver, which may hand it to another process as it is.
  if (auto zeroed = zero_ranges({DeviceRange{region.address, region.size_bytes}}, device); !zeroed)
    return zeroed.error();
  if (CUresult r = d.unmap(static_cast<CUdeviceptr>(region.address), region.size_bytes); r != CUDA_SUCCESS)
    return driver_error("cuMemUnmap", r);
  if (CUresult r = d.release(static_cast<CUmemGenericAllocationHandle>(region.handle)); r != CUDA_SUCCESS)
    return driver_error("cuMemRelease", r);
  std::lock_guard lock(reserved_mutex);
  std::erase_if(mapped_regions, [&](const FreshRegion& mapped) { return mapped.address == region.address; });
  return Result<void>();
}

std::vector<FreshRegion> mapped_fresh() {
  std::lock_guard lock(reserved_mutex);
  return mapped_regions;
}

}  // namespace dicebench::worker
