// The fused kernels of fused_kernels.hpp. Arithmetic is in float32; every value transformers'
// eager Qwen3 holds in the compute dtype is rounded to it at the same point here.
#include "models/engine/fused_kernels.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>

namespace dicebench::engine::fused {
namespace {

__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
template <class T>
__device__ __forceinline__ T from_float(float x);
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }
template <>
__device__ __forceinline__ __half from_float<__half>(float x) { return __float2half_rn(x); }
// x as the compute dtype holds it.
template <class T>
__device__ __forceinline__ float rounded(float x) { return to_float(from_float<T>(x)); }

constexpr int kThreads = 256;

// The sum of `value` over the block (every thread gets it); once per kernel.
__device__ float block_sum(float value) {
  __shared__ float warp_sums[kThreads / 32];
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_xor_sync(0xffffffffu, value, offset);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = value;
  __syncthreads();
  value = threadIdx.x % 32 < kThreads / 32 ? warp_sums[threadIdx.x % 32] : 0.0f;
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}

// One block per row, in packs of 8 values (16 bytes) that each thread loads all at once before
// using any: a row of a decoding pass is a few KB, so the time is the loads' latency, paid once.
constexpr int kPack = 8, kPacksPerThread = 4;
struct alignas(16) Pack8 {
  uint4 bits;
};
template <class T>
__device__ __forceinline__ float element(const Pack8& pack, int e) {
  return to_float(reinterpret_cast<const T*>(&pack.bits)[e]);
}

template <class T>
__global__ void __launch_bounds__(kThreads) add_rms_norm_kernel(T* __restrict__ hidden, const T* __restrict__ delta,
                                                                 const T* __restrict__ weight, T* __restrict__ normed,
                                                                 int width, float eps) {
  const int packs = width / kPack;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * width;
  auto* hidden_packs = reinterpret_cast<Pack8*>(hidden + row);
  const auto* delta_packs = delta ? reinterpret_cast<const Pack8*>(delta + row) : nullptr;
  const auto* weight_packs = reinterpret_cast<const Pack8*>(weight);
  Pack8 h[kPacksPerThread], d[kPacksPerThread], w[kPacksPerThread];
#pragma unroll
  for (int k = 0; k < kPacksPerThread; ++k) {
    const int p = threadIdx.x + k * kThreads;
    if (p < packs) {
      h[k] = hidden_packs[p];
      if (delta_packs) d[k] = delta_packs[p];
      w[k] = weight_packs[p];
    }
  }
  float values[kPacksPerThread][kPack];
  float squares = 0.0f;
#pragma unroll
  for (int k = 0; k < kPacksPerThread; ++k) {
    const int p = threadIdx.x + k * kThreads;
    if (p >= packs) continue;
    Pack8 sum;
#pragma unroll
    for (int e = 0; e < kPack; ++e) {
      float value = element<T>(h[k], e);
      if (delta_packs) {
        value = rounded<T>(value + element<T>(d[k], e));
        reinterpret_cast<T*>(&sum.bits)[e] = from_float<T>(value);
      }
      values[k][e] = value;
      squares += value * value;
    }
    if (delta_packs) hidden_packs[p] = sum;
  }
  const float inverse = rsqrtf(block_sum(squares) / static_cast<float>(width) + eps);
  auto* normed_packs = reinterpret_cast<Pack8*>(normed + row);
#pragma unroll
  for (int k = 0; k < kPacksPerThread; ++k) {
    const int p = threadIdx.x + k * kThreads;
    if (p >= packs) continue;
    Pack8 out;
#pragma unroll
    for (int e = 0; e < kPack; ++e)
      reinterpret_cast<T*>(&out.bits)[e] = from_float<T>(element<T>(w[k], e) * rounded<T>(values[k][e] * inverse));
    normed_packs[p] = out;
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads) swiglu_kernel(const T* gate_up, T* out, int64_t n, int64_t width) {
  const int64_t total = n * width;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(kThreads) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * kThreads) {
    const int64_t row = i / width, column = i - row * width;
    const float gate = to_float(gate_up[row * 2 * width + column]);
    const float up = to_float(gate_up[row * 2 * width + width + column]);
    out[i] = from_float<T>(rounded<T>(gate / (1.0f + expf(-gate))) * up);
  }
}

// One (token, head) vector of kLanes * kPerLane = dim elements per kLanes lanes; a lane holds
// kPerLane consecutive elements, so an element's RoPE partner (dim / 2 away) sits in the lane
// kLanes / 2 away, at the same index. Lanes past the last vector compute on zeros and store
// nothing, so every shuffle has the whole warp.
template <class T, int kPerLane, int kLanes>
__global__ void __launch_bounds__(kThreads) attention_inputs_kernel(AttentionInputs a) {
  constexpr int dim = kPerLane * kLanes;
  const int lane = threadIdx.x % kLanes;
  const int64_t all_heads = a.heads + 2 * a.kv_heads;
  const int64_t vector = (static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x) / kLanes;
  const bool active = vector < a.rows * a.count * all_heads;
  const int64_t token = active ? vector / all_heads : 0, head = active ? vector - token * all_heads : 0;
  const T* source = static_cast<const T*>(a.qkv) + vector * dim + lane * kPerLane;
  float x[kPerLane];
  float squares = 0.0f;
#pragma unroll
  for (int j = 0; j < kPerLane; ++j) {
    x[j] = active ? to_float(source[j]) : 0.0f;
    squares += x[j] * x[j];
  }
#pragma unroll
  for (int offset = kLanes / 2; offset > 0; offset /= 2) squares += __shfl_xor_sync(0xffffffffu, squares, offset);
  const float inverse = rsqrtf(squares / static_cast<float>(dim) + a.eps);
  const bool is_value = head >= a.heads + a.kv_heads;
  const T* weight = static_cast<const T*>(a.qk_norm) + (is_value ? 0 : head) * dim + lane * kPerLane;
  const int64_t offset_in_table = (active ? a.positions[token] : 0) * dim + lane * kPerLane;
  const T* cos = static_cast<const T*>(a.cos) + offset_in_table;
  const T* sin = static_cast<const T*>(a.sin) + offset_in_table;
  T out[kPerLane];
#pragma unroll
  for (int j = 0; j < kPerLane; ++j) {
    const float normed = rounded<T>(to_float(weight[j]) * rounded<T>(x[j] * inverse));
    const float partner = __shfl_xor_sync(0xffffffffu, normed, kLanes / 2);
    out[j] = is_value ? from_float<T>(x[j])
                      : from_float<T>(rounded<T>(normed * to_float(cos[j])) + rounded<T>(partner * to_float(sin[j])));
  }
  if (!active) return;
  const int64_t row = token / a.count, position_in_pass = token - row * a.count;
  const int64_t group = a.heads / a.kv_heads;
  T* destination;
  if (head < a.heads) {  // query head h -> [row, h / group, (h % group) * count + position_in_pass]
    const int64_t kv = head / group, within = head - kv * group;
    destination = static_cast<T*>(a.q) + (((row * a.kv_heads + kv) * group + within) * a.count + position_in_pass) * dim;
  } else {
    const int64_t kv = is_value ? head - a.heads - a.kv_heads : head - a.heads;
    destination = static_cast<T*>(is_value ? a.value_cache : a.key_cache) +
                  ((row * a.kv_heads + kv) * a.cache_columns + a.columns[position_in_pass]) * dim;
  }
#pragma unroll
  for (int j = 0; j < kPerLane; ++j) destination[lane * kPerLane + j] = out[j];
}

const char* launched() {
  const cudaError_t error = cudaGetLastError();
  return error == cudaSuccess ? nullptr : cudaGetErrorString(error);
}

template <class T>
const char* add_rms_norm_as(void* hidden, const void* delta, const void* weight, void* normed, int64_t rows, int64_t width,
                            float eps, cudaStream_t stream) {
  add_rms_norm_kernel<T><<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
      static_cast<T*>(hidden), static_cast<const T*>(delta), static_cast<const T*>(weight), static_cast<T*>(normed),
      static_cast<int>(width), eps);
  return launched();
}

template <class T>
const char* swiglu_as(const void* gate_up, void* out, int64_t n, int64_t width, cudaStream_t stream) {
  const int64_t blocks = std::min<int64_t>((n * width + kThreads - 1) / kThreads, 65536);
  swiglu_kernel<T><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(static_cast<const T*>(gate_up),
                                                                           static_cast<T*>(out), n, width);
  return launched();
}

template <class T, int kPerLane, int kLanes>
const char* attention_inputs_as(const AttentionInputs& a, cudaStream_t stream) {
  const int64_t threads = a.rows * a.count * (a.heads + 2 * a.kv_heads) * kLanes;
  attention_inputs_kernel<T, kPerLane, kLanes><<<static_cast<unsigned>((threads + kThreads - 1) / kThreads), kThreads, 0, stream>>>(a);
  return launched();
}

template <class T>
const char* attention_inputs_as(const AttentionInputs& a, cudaStream_t stream) {
  switch (a.dim) {
    case 16: return attention_inputs_as<T, 1, 16>(a, stream);
    case 32: return attention_inputs_as<T, 1, 32>(a, stream);
    case 64: return attention_inputs_as<T, 2, 32>(a, stream);
    case 128: return attention_inputs_as<T, 4, 32>(a, stream);
    case 256: return attention_inputs_as<T, 8, 32>(a, stream);
    default: return "attention_inputs: unsupported head_dim";
  }
}

}  // namespace

const char* add_rms_norm(Half type, void* hidden, const void* delta, const void* weight, void* normed, int64_t rows,
                         int64_t width, float eps, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  return type == Half::bfloat16 ? add_rms_norm_as<__nv_bfloat16>(hidden, delta, weight, normed, rows, width, eps, s)
                                : add_rms_norm_as<__half>(hidden, delta, weight, normed, rows, width, eps, s);
}

const char* swiglu(Half type, const void* gate_up, void* out, int64_t n, int64_t width, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  return type == Half::bfloat16 ? swiglu_as<__nv_bfloat16>(gate_up, out, n, width, s) : swiglu_as<__half>(gate_up, out, n, width, s);
}

bool add_rms_norm_supported(int64_t width) { return width % kPack == 0 && width <= int64_t{kPack} * kPacksPerThread * kThreads; }

bool attention_inputs_supported(int64_t dim) { return dim == 16 || dim == 32 || dim == 64 || dim == 128 || dim == 256; }

const char* attention_inputs(Half type, const AttentionInputs& inputs, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  return type == Half::bfloat16 ? attention_inputs_as<__nv_bfloat16>(inputs, s) : attention_inputs_as<__half>(inputs, s);
}

}  // namespace dicebench::engine::fused
