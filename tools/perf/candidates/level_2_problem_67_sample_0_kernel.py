import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

# Convolution on cuDNN; GELU and the global average pool are fused into one reduction kernel:
# one block per (n, c) plane sums GELU(x) over H*W and writes the mean, so the activated tensor
# is never materialised.
gelu_pool_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <c10/cuda/CUDAException.h>

constexpr int kPoolThreads = 256;

__device__ __forceinline__ float gelu(float x) {
    return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
}

__global__ void gelu_global_avg_pool_kernel(const float* __restrict__ x, float* __restrict__ out, int plane_size) {
    const float* p = x + (int64_t)blockIdx.x * plane_size;
    float sum = 0.0f;
    for (int i = threadIdx.x; i < plane_size; i += kPoolThreads) sum += gelu(p[i]);

    __shared__ float warp_sums[kPoolThreads / 32];
    for (int o = 16; o > 0; o >>= 1) sum += __shfl_down_sync(0xffffffff, sum, o);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) warp_sums[warp] = sum;
    __syncthreads();
    if (warp == 0) {
        sum = lane < kPoolThreads / 32 ? warp_sums[lane] : 0.0f;
        for (int o = 16; o > 0; o >>= 1) sum += __shfl_down_sync(0xffffffff, sum, o);
        if (lane == 0) out[blockIdx.x] = sum / (float)plane_size;
    }
}

torch::Tensor gelu_global_avg_pool_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.dim() == 4, "x must be a 4D CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "float32 only");
    auto xc = x.contiguous();
    const int64_t n = xc.size(0), c = xc.size(1);
    const int plane = xc.size(2) * xc.size(3);
    auto out = torch::empty({n, c}, xc.options());
    gelu_global_avg_pool_kernel<<<n * c, kPoolThreads>>>(xc.data_ptr<float>(), out.data_ptr<float>(), plane);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

gelu_pool_cpp_source = "torch::Tensor gelu_global_avg_pool_cuda(torch::Tensor x);"

gelu_pool = load_inline(
    name="gelu_global_avg_pool",
    cpp_sources=gelu_pool_cpp_source,
    cuda_sources=gelu_pool_source,
    functions=["gelu_global_avg_pool_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super(ModelNew, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        x = self.conv(x)
        return gelu_pool.gelu_global_avg_pool_cuda(x)
