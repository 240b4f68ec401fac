// Zeroing device memory before it can reach another job (device_scrub.hpp).
#include "harness/worker/device_scrub.hpp"

#include <cuda_runtime_api.h>

#include <optional>
#include <string>

namespace dicebench::worker {
namespace {

Error cuda_failure(const char* what, cudaError_t error) {
  cudaGetLastError();  // not sticky ones: the next call must not see it
  return make_error(ErrorKind::harness_failure,
                    std::string(what) + ": " + cudaGetErrorName(error) + " (" + cudaGetErrorString(error) + ")");
}

}  // namespace

Result<std::size_t> zero_ranges(const std::vector<DeviceRange>& ranges, int device, std::uintptr_t stream) {
  int previous = -1;
  if (cudaGetDevice(&previous) != cudaSuccess) previous = -1;
  if (previous != device)
    if (cudaError_t error = cudaSetDevice(device); error != cudaSuccess) return cuda_failure("cudaSetDevice", error);
  const auto handle = reinterpret_cast<cudaStream_t>(stream);
  std::size_t zeroed = 0;
  std::optional<Error> failed;
  for (const DeviceRange& range : ranges) {
    if (range.size_bytes == 0) continue;
    if (cudaError_t error = cudaMemsetAsync(reinterpret_cast<void*>(range.address), 0, range.size_bytes, handle);
        error != cudaSuccess) {
      failed = cuda_failure("cudaMemsetAsync", error);
      break;
    }
    zeroed += range.size_bytes;
  }
  // What was queued is waited for even after a failure: the caller frees the memory next.
  if (cudaError_t error = cudaStreamSynchronize(handle); error != cudaSuccess && !failed)
    failed = cuda_failure("cudaStreamSynchronize", error);
  if (previous >= 0 && previous != device) cudaSetDevice(previous);
  if (failed) return *failed;
  return zeroed;
}

}  // namespace dicebench::worker
