# fastpath-test: functions=square_cuda expect=fallback reason=template
# A template kernel launched with deduced template arguments: the fast path cannot name the
# instantiation for NVRTC, so it falls back.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>

template <typename T>
__global__ void square_kernel(const T* x, T* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * x[i];
}

torch::Tensor square_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    int n = x.numel();
    square_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""

cpp_source = "torch::Tensor square_cuda(torch::Tensor x);"

module = load_inline(
    name="deduced_template",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["square_cuda"],
)


class ModelNew(nn.Module):
    def forward(self, x):
        return module.square_cuda(x)


def get_inputs():
    return [torch.randn(1000, device="cuda")]


def get_init_inputs():
    return []
