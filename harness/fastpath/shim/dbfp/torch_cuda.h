// The CUDA part of the fast path's shim: current streams, device guards, the cuBLAS handle and
// device properties of the process's torch (ATen/cuda/CUDAContext.h, c10/cuda/CUDAGuard.h ...).
#pragma once

#include <cuda_runtime_api.h>

#include "dbfp/torch_api.h"

#define C10_CUDA_CHECK(EXPR)                                                                      \
  do {                                                                                            \
    const cudaError_t dbfp_cuda_err_ = (EXPR);                                                    \
    if (dbfp_cuda_err_ != cudaSuccess)                                                            \
      throw ::c10::Error(::c10::str("CUDA error: ", cudaGetErrorString(dbfp_cuda_err_)));         \
  } while (false)
#define C10_CUDA_CHECK_WARN(EXPR)                                                                 \
  do {                                                                                            \
    const cudaError_t dbfp_cuda_err_ = (EXPR);                                                    \
    if (dbfp_cuda_err_ != cudaSuccess)                                                            \
      TORCH_WARN("CUDA warning: ", cudaGetErrorString(dbfp_cuda_err_));                           \
  } while (false)
#define C10_CUDA_KERNEL_LAUNCH_CHECK() C10_CUDA_CHECK(cudaGetLastError())
#define AT_CUDA_CHECK(EXPR) C10_CUDA_CHECK(EXPR)

namespace c10::cuda {

inline DeviceIndex current_device() {
  int32_t d = 0;
  dbfp::check_status(dbfp::api().current_device(&d));
  return static_cast<DeviceIndex>(d);
}
inline DeviceIndex device_count() { return static_cast<DeviceIndex>(dbfp::api().device_count()); }
inline void set_device(DeviceIndex d) { dbfp::check_status(dbfp::api().set_device(d)); }

class CUDAStream {
 public:
  CUDAStream(cudaStream_t stream, DeviceIndex device) : stream_(stream), device_(device) {}
  cudaStream_t stream() const { return stream_; }
  operator cudaStream_t() const { return stream_; }
  DeviceIndex device_index() const { return device_; }
  Device device() const { return Device(DeviceType::CUDA, device_); }
  void synchronize() const { C10_CUDA_CHECK(cudaStreamSynchronize(stream_)); }
  bool query() const { return cudaStreamQuery(stream_) == cudaSuccess; }
  bool operator==(const CUDAStream& o) const { return stream_ == o.stream_ && device_ == o.device_; }
  bool operator!=(const CUDAStream& o) const { return !(*this == o); }

 private:
  cudaStream_t stream_;
  DeviceIndex device_;
};

inline CUDAStream getCurrentCUDAStream(DeviceIndex device = -1) {
  void* stream = nullptr;
  dbfp::check_status(dbfp::api().current_stream(device, &stream));
  return CUDAStream(static_cast<cudaStream_t>(stream), device < 0 ? current_device() : device);
}
inline CUDAStream getDefaultCUDAStream(DeviceIndex device = -1) {
  return CUDAStream(nullptr, device < 0 ? current_device() : device);
}

// Sets the current device for its lifetime (torch's CUDAGuard).
class CUDAGuard {
 public:
  explicit CUDAGuard(DeviceIndex device) : original_(c10::cuda::current_device()), current_(original_) {
    set_index(device);
  }
  explicit CUDAGuard(Device device)
      : CUDAGuard(device.index() < 0 ? c10::cuda::current_device() : device.index()) {
    if (!device.is_cuda()) throw ::c10::Error(::c10::str("Expected a CUDA device, but got: ", device));
  }
  CUDAGuard(const CUDAGuard&) = delete;
  CUDAGuard& operator=(const CUDAGuard&) = delete;
  ~CUDAGuard() {
    if (current_ != original_) dbfp::api().set_device(original_);
  }
  void set_device(Device device) { set_index(device.index()); }
  void reset_device(Device device) { set_index(device.index()); }
  void set_index(DeviceIndex device) {
    if (device >= 0 && device != current_) {
      c10::cuda::set_device(device);
      current_ = device;
    }
  }
  Device original_device() const { return Device(DeviceType::CUDA, original_); }
  Device current_device() const { return Device(DeviceType::CUDA, current_); }

 private:
  DeviceIndex original_;
  DeviceIndex current_;
};

class OptionalCUDAGuard {
 public:
  OptionalCUDAGuard() = default;
  explicit OptionalCUDAGuard(std::optional<Device> device) {
    if (device.has_value()) guard_.emplace(*device);
  }
  explicit OptionalCUDAGuard(std::optional<DeviceIndex> device) {
    if (device.has_value()) guard_.emplace(*device);
  }
  void set_device(Device device) {
    if (guard_) guard_->set_device(device);
    else guard_.emplace(device);
  }
  void reset() { guard_.reset(); }
  std::optional<Device> original_device() const {
    return guard_ ? std::optional<Device>(guard_->original_device()) : std::nullopt;
  }
  std::optional<Device> current_device() const {
    return guard_ ? std::optional<Device>(guard_->current_device()) : std::nullopt;
  }

 private:
  std::optional<CUDAGuard> guard_;
};

}  // namespace c10::cuda

namespace at::cuda {
using c10::cuda::CUDAGuard;
using c10::cuda::CUDAStream;
using c10::cuda::current_device;
using c10::cuda::device_count;
using c10::cuda::getCurrentCUDAStream;
using c10::cuda::getDefaultCUDAStream;
using c10::cuda::OptionalCUDAGuard;
using c10::cuda::set_device;
inline const cudaDeviceProp* getCurrentDeviceProperties() {
  const void* props = nullptr;
  dbfp::check_status(dbfp::api().device_properties(-1, &props));
  return static_cast<const cudaDeviceProp*>(props);
}
inline const cudaDeviceProp* getDeviceProperties(int64_t device) {
  const void* props = nullptr;
  dbfp::check_status(dbfp::api().device_properties(static_cast<int32_t>(device), &props));
  return static_cast<const cudaDeviceProp*>(props);
}
}  // namespace at::cuda

namespace torch::cuda {
inline int64_t device_count() { return c10::cuda::device_count(); }
inline bool is_available() { return device_count() > 0; }
inline void synchronize(int64_t device = -1) {
  c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(device < 0 ? c10::cuda::current_device() : device));
  C10_CUDA_CHECK(cudaDeviceSynchronize());
}
}  // namespace torch::cuda
