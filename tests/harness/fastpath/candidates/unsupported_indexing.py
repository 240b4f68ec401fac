# fastpath-test: functions=first_half_cuda expect=fallback reason=g++
# Host code that uses torch::indexing, which the shim does not declare: falls back.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>

__global__ void double_kernel(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= 2.0f;
}

torch::Tensor first_half_cuda(torch::Tensor x) {
    using namespace torch::indexing;
    auto half = x.index({Slice(0, x.size(0) / 2)}).contiguous().clone();
    int n = half.numel();
    double_kernel<<<(n + 255) / 256, 256>>>(half.data_ptr<float>(), n);
    return half;
}
"""

cpp_source = "torch::Tensor first_half_cuda(torch::Tensor x);"

module = load_inline(
    name="unsupported_indexing",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["first_half_cuda"],
)


class ModelNew(nn.Module):
    def forward(self, x):
        return module.first_half_cuda(x)


def get_inputs():
    return [torch.randn(64, 33, device="cuda")]


def get_init_inputs():
    return []
