# fastpath-test: functions=leaky_relu_cuda expect=nvrtc
# A templated kernel under AT_DISPATCH_FLOATING_TYPES (k<scalar_t>), host code in a lambda.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda.h>
#include <cuda_runtime.h>

template <typename scalar_t>
__global__ void leaky_relu_kernel(const scalar_t* __restrict__ x, scalar_t* __restrict__ y, scalar_t slope, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) {
        scalar_t v = x[i];
        y[i] = v > scalar_t(0) ? v : v * slope;
    }
}

torch::Tensor leaky_relu_cuda(torch::Tensor x, double slope) {
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const int64_t n = xc.numel();
    const int threads = 512;
    const int blocks = (int)((n + threads - 1) / threads);
    AT_DISPATCH_FLOATING_TYPES(xc.scalar_type(), "leaky_relu_cuda", ([&] {
        leaky_relu_kernel<scalar_t><<<blocks, threads>>>(
            xc.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), static_cast<scalar_t>(slope), n);
    }));
    return y;
}
"""

cpp_source = "torch::Tensor leaky_relu_cuda(torch::Tensor x, double slope);"

module = load_inline(
    name="dispatch_leaky_relu",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["leaky_relu_cuda"],
)


class ModelNew(nn.Module):
    def __init__(self, slope: float = 0.1) -> None:
        super().__init__()
        self.slope = slope

    def forward(self, x, x64):
        return module.leaky_relu_cuda(x, self.slope), module.leaky_relu_cuda(x64, self.slope)


def get_inputs():
    return [torch.randn(64, 1000, device="cuda"), torch.randn(333, device="cuda", dtype=torch.float64)]


def get_init_inputs():
    return [0.1]
