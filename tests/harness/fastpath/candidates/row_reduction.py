# fastpath-test: functions=row_sum_cuda expect=nvrtc
# A row reduction with shared memory and __syncthreads, built with extra nvcc flags.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

#define THREADS 256

__global__ void row_sum_kernel(const float* __restrict__ x, float* __restrict__ out, int rows, int cols) {
    __shared__ float partial[THREADS];
    int row = blockIdx.x;
    if (row >= rows) return;
    float acc = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        acc += x[(long)row * cols + c];
    }
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) {
            partial[threadIdx.x] += partial[threadIdx.x + stride];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        out[row] = partial[0];
    }
}

torch::Tensor row_sum_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.dim() == 2, "x must be 2-D, got ", x.dim(), " dimensions");
    auto xc = x.contiguous();
    int rows = xc.size(0);
    int cols = xc.size(1);
    auto out = torch::empty({rows}, xc.options());
    row_sum_kernel<<<rows, THREADS>>>(xc.data_ptr<float>(), out.data_ptr<float>(), rows, cols);
    return out.unsqueeze(1);
}
"""

cpp_source = "torch::Tensor row_sum_cuda(torch::Tensor x);"

row_sum = load_inline(
    name="row_sum",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["row_sum_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3", "--use_fast_math"],
)


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x):
        return row_sum.row_sum_cuda(x)


def get_inputs():
    return [torch.randn(1024, 3000, device="cuda")]


def get_init_inputs():
    return []
