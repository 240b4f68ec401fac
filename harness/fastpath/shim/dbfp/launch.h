// Kernel launches of the fast path: the splitter rewrites `k<<<grid, block, smem, stream>>>(args)`
// into `::dbfp::launcher<decltype(&k)>(::dbfp::kernel_slot(i), grid, block, smem, stream)(args)`.
// The launcher's call operator has the kernel's own parameter types, so the arguments convert
// exactly as in a call of the kernel; it then packs their addresses and calls cudaLaunchKernel with
// the cudaKernel_t the module loaded from the cubin. Launch errors therefore surface as they do for
// <<<>>>: through cudaGetLastError()/cudaPeekAtLastError(), not as exceptions.
#pragma once

#include <cuda_runtime.h>

#include <type_traits>

namespace dbfp {

// The kernel table of this glue; defined (sized) in the generated part of the CUDA glue.
extern void* g_kernel_slots[];

inline void* kernel_slot(int slot) { return g_kernel_slots[slot]; }
// A kernel named outside a launch: its cudaKernel_t, which the runtime API takes as `const void*`
// wherever it takes a __global__ function (cudaFuncSetAttribute, occupancy, cudaLaunchKernel ...).
inline const void* kernel_ref(int slot) { return g_kernel_slots[slot]; }

// The slot of the instantiation for the dispatched scalar_t among Ts (AT_DISPATCH_*).
template <class T, class... Ts, class... Ids>
constexpr int slot_for(Ids... ids) {
  constexpr bool match[] = {std::is_same_v<T, Ts>...};
  const int slots[] = {ids...};
  for (std::size_t i = 0; i < sizeof...(Ts); ++i)
    if (match[i]) return slots[i];
  return slots[0];
}

template <class F>
struct launcher;

template <class... P>
struct launcher<void (*)(P...)> {
  launcher(void* kernel, dim3 grid, dim3 block, std::size_t shared_memory = 0, cudaStream_t stream = 0)
      : kernel_(kernel), grid_(grid), block_(block), shared_memory_(shared_memory), stream_(stream) {}

  void operator()(P... args) const {
    void* packed[sizeof...(P) + 1] = {const_cast<void*>(static_cast<const void*>(&args))..., nullptr};
    (void)cudaLaunchKernel(kernel_, grid_, block_, packed, shared_memory_, stream_);
  }

 private:
  const void* kernel_;
  dim3 grid_;
  dim3 block_;
  std::size_t shared_memory_;
  cudaStream_t stream_;
};

}  // namespace dbfp
