# fastpath-test: functions=min_max_cuda expect=nvrtc
# Unqualified min and max in the host code of cuda_sources, which nvcc's cuda_runtime.h declares
# (int pairs, mixed signedness compared as unsigned, float and double through fminf/fmax ...),
# also from a __host__ __device__ function; the block size of a launch comes from min.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cmath>

__host__ __device__ inline int clamp_threads(int n) { return min(max(n, 32), 1024); }

__global__ void twice_kernel(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];
}

std::vector<torch::Tensor> min_max_cuda(torch::Tensor x) {
    const int n = x.numel();
    auto y = torch::empty_like(x);
    const int block = min(256, n);
    twice_kernel<<<(n + block - 1) / block, block>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    auto values = torch::empty({16}, torch::dtype(torch::kFloat64));
    double* v = values.data_ptr<double>();
    v[0] = block;
    v[1] = max(x.size(0), 1L);
    v[2] = max(-1, 5u);
    v[3] = min(-1L, 5UL);
    v[4] = min(NAN, 1.0f);
    v[5] = max(1.0f, NAN);
    v[6] = max(2.5, 1.0f);
    v[7] = min(3.0f, -0.5);
    v[8] = max(-3LL, 2ULL);
    v[9] = min(7u, 9u);
    v[10] = max(-2L, -3L);
    v[11] = min(-0.0f, 0.0f);
    v[12] = std::signbit(min(-0.0, 0.0)) ? 1 : 0;
    v[13] = clamp_threads(n);
    v[14] = clamp_threads(3);
    v[15] = min(static_cast<long long>(n), 10LL);
    return {y, values};
}
"""

cpp_source = "std::vector<torch::Tensor> min_max_cuda(torch::Tensor x);"

module = load_inline(
    name="host_min_max",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["min_max_cuda"],
)


class ModelNew(nn.Module):
    def forward(self, x):
        return module.min_max_cuda(x)


def get_inputs():
    return [torch.randn(100, device="cuda")]


def get_init_inputs():
    return []
