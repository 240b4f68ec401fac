import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# LayerNorm over the trailing (64, 256, 256) dims: each sample has 4M elements, far too many for
# one block. Kernel 1 spreads every row over many blocks, each writing a partial (sum, sum of
# squares) in double; kernel 2 combines a row's partials into mean / rstd and normalises with the
# affine weight and bias.
layernorm_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <c10/cuda/CUDAException.h>

constexpr int kThreads = 256;
constexpr int kChunksPerRow = 256;

__device__ __forceinline__ double warp_sum(double v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffff, v, offset);
    return v;
}

// grid = (kChunksPerRow, rows). partial[row * kChunksPerRow + chunk] = {sum, sumsq} of the chunk.
__global__ void layernorm_partial_stats_kernel(const float* __restrict__ x, double2* __restrict__ partial,
                                               int64_t row_size) {
    const int64_t row = blockIdx.y;
    const int64_t chunk = (row_size + gridDim.x - 1) / gridDim.x;
    const int64_t begin = blockIdx.x * chunk;
    const int64_t end = min(begin + chunk, row_size);
    const float* xr = x + row * row_size;

    double s = 0.0, ss = 0.0;
    for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
        double v = (double)xr[i];
        s += v;
        ss += v * v;
    }

    __shared__ double sh_s[kThreads / 32];
    __shared__ double sh_ss[kThreads / 32];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    s = warp_sum(s);
    ss = warp_sum(ss);
    if (lane == 0) { sh_s[warp] = s; sh_ss[warp] = ss; }
    __syncthreads();
    if (warp == 0) {
        s = lane < kThreads / 32 ? sh_s[lane] : 0.0;
        ss = lane < kThreads / 32 ? sh_ss[lane] : 0.0;
        s = warp_sum(s);
        ss = warp_sum(ss);
        if (lane == 0) partial[row * gridDim.x + blockIdx.x] = make_double2(s, ss);
    }
}

// grid = (blocks_per_row, rows): every block first folds its row's partials, then normalises a slice.
__global__ void layernorm_apply_kernel(const float* __restrict__ x, const double2* __restrict__ partial,
                                       const float* __restrict__ weight, const float* __restrict__ bias,
                                       float* __restrict__ y, int64_t row_size, int num_partials, float eps) {
    __shared__ float sh_mean, sh_rstd;
    const int64_t row = blockIdx.y;
    if (threadIdx.x < 32) {
        double s = 0.0, ss = 0.0;
        for (int i = threadIdx.x; i < num_partials; i += 32) {
            double2 p = partial[row * num_partials + i];
            s += p.x;
            ss += p.y;
        }
        s = warp_sum(s);
        ss = warp_sum(ss);
        if (threadIdx.x == 0) {
            double mean = s / (double)row_size;
            double var = ss / (double)row_size - mean * mean;
            if (var < 0.0) var = 0.0;
            sh_mean = (float)mean;
            sh_rstd = (float)(1.0 / sqrt(var + (double)eps));
        }
    }
    __syncthreads();
    const float mean = sh_mean, rstd = sh_rstd;
    const float* xr = x + row * row_size;
    float* yr = y + row * row_size;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < row_size;
         i += (int64_t)gridDim.x * blockDim.x) {
        yr[i] = (xr[i] - mean) * rstd * weight[i] + bias[i];
    }
}

torch::Tensor layernorm_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "float32 only");
    auto xc = x.contiguous();
    auto w = weight.contiguous();
    auto b = bias.contiguous();
    const int64_t row_size = w.numel();
    TORCH_CHECK(row_size > 0 && xc.numel() % row_size == 0, "normalized shape does not match the input");
    const int64_t rows = xc.numel() / row_size;
    auto y = torch::empty_like(xc);
    auto partial = torch::empty({rows * kChunksPerRow * 2}, xc.options().dtype(torch::kFloat64));

    dim3 stats_grid(kChunksPerRow, rows);
    layernorm_partial_stats_kernel<<<stats_grid, kThreads>>>(
        xc.data_ptr<float>(), reinterpret_cast<double2*>(partial.data_ptr<double>()), row_size);
    C10_CUDA_KERNEL_LAUNCH_CHECK();

    const int blocks_per_row = (int)std::min<int64_t>((row_size + kThreads - 1) / kThreads, 1024);
    dim3 apply_grid(blocks_per_row, rows);
    layernorm_apply_kernel<<<apply_grid, kThreads>>>(
        xc.data_ptr<float>(), reinterpret_cast<const double2*>(partial.data_ptr<double>()),
        w.data_ptr<float>(), b.data_ptr<float>(), y.data_ptr<float>(), row_size, kChunksPerRow, (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

layernorm_cpp_source = "torch::Tensor layernorm_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps);"

layernorm = load_inline(
    name="layernorm_two_pass",
    cpp_sources=layernorm_cpp_source,
    cuda_sources=layernorm_source,
    functions=["layernorm_cuda"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, normalized_shape: tuple):
        super(ModelNew, self).__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return layernorm.layernorm_cuda(x, self.ln.weight, self.ln.bias, self.ln.eps)
