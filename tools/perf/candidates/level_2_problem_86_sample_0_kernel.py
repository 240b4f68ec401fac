import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Whole layer in one kernel: a register-blocked shared-memory GEMM computing x @ W^T (64x64 output
# tile per block, 4x4 per thread) whose epilogue adds the bias, divides by the scalar and applies
# the exact GELU before the single store.
fused_linear_gelu_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <c10/cuda/CUDAException.h>

constexpr int BM = 64;
constexpr int BN = 64;
constexpr int BK = 16;

__device__ __forceinline__ float gelu_exact(float v) {
    return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
}

// X: (M, K) row-major, W: (N, K) row-major (nn.Linear layout), Y: (M, N).
__global__ void linear_div_gelu_kernel(const float* __restrict__ X, const float* __restrict__ W,
                                       const float* __restrict__ bias, float* __restrict__ Y,
                                       int M, int N, int K, float inv_divisor) {
    __shared__ float Xs[BK][BM + 1];
    __shared__ float Ws[BK][BN + 1];

    const int tid = threadIdx.x;
    const int tx = tid % 16, ty = tid / 16;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

    float acc[4][4] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int l = 0; l < 4; ++l) {
            const int e = tid + l * 256;      // 0..1023 over a 64 x 16 slice
            const int r = e / BK, k = e % BK;
            const int gk = k0 + k;
            const int xr = row0 + r, wr = col0 + r;
            Xs[k][r] = (xr < M && gk < K) ? X[(size_t)xr * K + gk] : 0.0f;
            Ws[k][r] = (wr < N && gk < K) ? W[(size_t)wr * K + gk] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a[4], b[4];
#pragma unroll
            for (int i = 0; i < 4; ++i) a[i] = Xs[k][ty + 16 * i];
#pragma unroll
            for (int j = 0; j < 4; ++j) b[j] = Ws[k][tx + 16 * j];
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const int r = row0 + ty + 16 * i;
        if (r >= M) continue;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int c = col0 + tx + 16 * j;
            if (c < N) Y[(size_t)r * N + c] = gelu_exact((acc[i][j] + bias[c]) * inv_divisor);
        }
    }
}

torch::Tensor linear_div_gelu_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double divisor) {
    TORCH_CHECK(x.is_cuda() && weight.is_cuda() && bias.is_cuda(), "inputs must be CUDA tensors");
    auto X = x.contiguous();
    auto W = weight.contiguous();
    auto b = bias.contiguous();
    const int M = X.size(0), K = X.size(1), N = W.size(0);
    TORCH_CHECK(W.size(1) == K && b.numel() == N, "shape mismatch");
    auto Y = torch::empty({M, N}, X.options());
    dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
    linear_div_gelu_kernel<<<grid, 256>>>(X.data_ptr<float>(), W.data_ptr<float>(), b.data_ptr<float>(),
                                          Y.data_ptr<float>(), M, N, K, (float)(1.0 / divisor));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return Y;
}
"""

fused_linear_gelu_cpp_source = (
    "torch::Tensor linear_div_gelu_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double divisor);"
)

fused_linear_gelu = load_inline(
    name="fused_linear_div_gelu",
    cpp_sources=fused_linear_gelu_cpp_source,
    cuda_sources=fused_linear_gelu_source,
    functions=["linear_div_gelu_cuda"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, input_size, output_size, divisor):
        super(ModelNew, self).__init__()
        self.linear = nn.Linear(input_size, output_size)
        self.divisor = divisor

    def forward(self, x):
        return fused_linear_gelu.linear_div_gelu_cuda(x, self.linear.weight, self.linear.bias, self.divisor)
