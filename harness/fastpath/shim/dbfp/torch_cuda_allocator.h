// torch's CUDA caching allocator for the fast path's shim (c10/cuda/CUDACachingAllocator.h):
// c10::DataPtr, and get()->allocate, raw_alloc, raw_alloc_with_stream and raw_delete, each done by
// the process's own torch allocator through the table (dbfp_api::cuda_*). Memory therefore comes
// from, and goes back to, the pool torch's build would use, on the same stream, with the same
// deleter; a DataPtr gives its memory back when it is destroyed or cleared, as torch's does.
#pragma once

#include "dbfp/torch_cuda.h"

namespace c10 {

using DeleterFnPtr = void (*)(void*);

// Memory and the context that frees it (c10/core/Allocator.h). Move-only; true while it holds
// either.
class DataPtr {
 public:
  DataPtr() : device_(DeviceType::CPU) {}
  DataPtr(void* data, Device device) : data_(data), device_(device) {}
  DataPtr(void* data, void* ctx, DeleterFnPtr ctx_deleter, Device device)
      : data_(data), ctx_(ctx, ctx_deleter ? ctx_deleter : &delete_nothing), device_(device) {}
  void* operator->() const { return data_; }
  void clear() {
    ctx_ = nullptr;
    data_ = nullptr;
  }
  void* get() const { return data_; }
  void* mutable_get() { return data_; }
  operator bool() const { return data_ || ctx_; }
  Device device() const { return device_; }

 private:
  static void delete_nothing(void*) {}
  void* data_ = nullptr;
  std::unique_ptr<void, DeleterFnPtr> ctx_{nullptr, &delete_nothing};
  Device device_;
};

}  // namespace c10

namespace c10::cuda::CUDACachingAllocator {

class CUDAAllocator {
 public:
  // On the current device and its current stream.
  DataPtr allocate(std::size_t nbytes) {
    void* data = nullptr;
    void* owner = nullptr;
    int32_t device = 0;
    dbfp::check_status(dbfp::api().cuda_allocate(nbytes, &data, &owner, &device));
    return DataPtr(data, owner, &free_allocation, Device(DeviceType::CUDA, static_cast<DeviceIndex>(device)));
  }
  void* raw_alloc(std::size_t nbytes) {
    void* out = nullptr;
    dbfp::check_status(dbfp::api().cuda_raw_alloc(nbytes, 0, nullptr, &out));
    return out;
  }
  void* raw_alloc_with_stream(std::size_t nbytes, cudaStream_t stream) {
    void* out = nullptr;
    dbfp::check_status(dbfp::api().cuda_raw_alloc(nbytes, 1, stream, &out));
    return out;
  }
  void raw_delete(void* ptr) { dbfp::check_status(dbfp::api().cuda_raw_delete(ptr)); }

 private:
  static void free_allocation(void* owner) { dbfp::api().cuda_free_allocation(owner); }
};

inline CUDAAllocator* get() {
  static CUDAAllocator allocator;
  return &allocator;
}
inline void* raw_alloc(std::size_t nbytes) { return get()->raw_alloc(nbytes); }
inline void* raw_alloc_with_stream(std::size_t nbytes, cudaStream_t stream) {
  return get()->raw_alloc_with_stream(nbytes, stream);
}
inline void raw_delete(void* ptr) { get()->raw_delete(ptr); }

}  // namespace c10::cuda::CUDACachingAllocator
