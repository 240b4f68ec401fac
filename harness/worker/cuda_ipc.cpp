// CUDA IPC of device allocations without torch's sharing machinery (cuda_ipc.hpp).
#include "harness/worker/cuda_ipc.hpp"

#include <cuda.h>  // the driver API's types only; the function comes through cudart's entry points
#include <cuda_runtime_api.h>

#include <cstring>

namespace dicebench::worker {
namespace {

static_assert(sizeof(cudaIpcMemHandle_t) == kIpcHandleBytes);

std::string cuda_error(const char* what, cudaError_t error) {
  return std::string(what) + ": " + cudaGetErrorName(error) + " (" + cudaGetErrorString(error) + ")";
}

// Makes `device` current for one call and restores the caller's device after it.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = -1;
    status_ = previous_ == device ? cudaSuccess : cudaSetDevice(device);
  }
  ~DeviceScope() {
    if (previous_ >= 0) cudaSetDevice(previous_);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;
  cudaError_t status() const { return status_; }

 private:
  int previous_ = -1;
  cudaError_t status_ = cudaSuccess;
};

// The base and size of the allocation holding `pointer` (cuMemGetAddressRange, reached through
// cudart so that nothing here links libcuda: the module must load on machines without a driver).
Result<IpcMapping> address_range(std::uintptr_t pointer) {
  using AddressRange = CUresult (*)(CUdeviceptr*, size_t*, CUdeviceptr);
  static AddressRange address_range_fn = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &fn, 12000, cudaEnableDefault, &found) !=
            cudaSuccess ||
        found != cudaDriverEntryPointSuccess)
      fn = nullptr;
    return reinterpret_cast<AddressRange>(fn);
  }();
  if (address_range_fn == nullptr) return make_error("the driver has no cuMemGetAddressRange");
  CUdeviceptr base = 0;
  size_t size = 0;
  if (CUresult result = address_range_fn(&base, &size, static_cast<CUdeviceptr>(pointer)); result != CUDA_SUCCESS)
    return make_error("cuMemGetAddressRange failed with CUresult " + std::to_string(result) +
                      " (not device memory of this process?)");
  return IpcMapping{static_cast<std::uintptr_t>(base), size};
}

}  // namespace

Result<IpcExport> ipc_export(std::uintptr_t pointer, int device) {
  DeviceScope scope(device);
  if (scope.status() != cudaSuccess) return make_error(cuda_error("cudaSetDevice", scope.status()));
  auto range = address_range(pointer);
  if (!range) return range.error();
  cudaIpcMemHandle_t handle{};
  if (cudaError_t error = cudaIpcGetMemHandle(&handle, reinterpret_cast<void*>(range->base)); error != cudaSuccess)
    return make_error(cuda_error("cudaIpcGetMemHandle", error));
  return IpcExport{std::string(reinterpret_cast<const char*>(&handle), sizeof handle), range->base, range->size_bytes};
}

Result<IpcMapping> ipc_open(const std::string& handle_bytes, int device) {
  if (handle_bytes.size() != kIpcHandleBytes)
    return make_error("an IPC handle has " + std::to_string(kIpcHandleBytes) + " bytes, not " +
                      std::to_string(handle_bytes.size()));
  DeviceScope scope(device);
  if (scope.status() != cudaSuccess) return make_error(cuda_error("cudaSetDevice", scope.status()));
  cudaIpcMemHandle_t handle{};
  std::memcpy(&handle, handle_bytes.data(), sizeof handle);
  void* pointer = nullptr;
  if (cudaError_t error = cudaIpcOpenMemHandle(&pointer, handle, cudaIpcMemLazyEnablePeerAccess);
      error != cudaSuccess) {
    cudaGetLastError();  // not sticky: the next call must not see it
    return make_error(cuda_error("cudaIpcOpenMemHandle", error));
  }
  auto range = address_range(reinterpret_cast<std::uintptr_t>(pointer));
  if (!range) {
    cudaIpcCloseMemHandle(pointer);
    return range.error();
  }
  return IpcMapping{reinterpret_cast<std::uintptr_t>(pointer), range->size_bytes};
}

Result<void> ipc_close(std::uintptr_t base, int device) {
  DeviceScope scope(device);
  if (scope.status() != cudaSuccess) return make_error(cuda_error("cudaSetDevice", scope.status()));
  // Work queued on any stream may still read the mapping: the device finishes it first.
  if (cudaError_t error = cudaDeviceSynchronize(); error != cudaSuccess)
    return make_error(cuda_error("cudaDeviceSynchronize", error));
  if (cudaError_t error = cudaIpcCloseMemHandle(reinterpret_cast<void*>(base)); error != cudaSuccess)
    return make_error(cuda_error("cudaIpcCloseMemHandle", error));
  return Result<void>();
}

}  // namespace dicebench::worker
