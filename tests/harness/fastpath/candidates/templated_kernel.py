# fastpath-test: functions=scale_add_cuda expect=nvrtc
# A templated kernel launched as k<float> and k<double>, with a non-type template argument.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>

template <typename T, int UNROLL>
__global__ void scale_add_kernel(const T* __restrict__ x, const T* __restrict__ y, T* __restrict__ out,
                                 T alpha, long n) {
    long base = ((long)blockIdx.x * blockDim.x + threadIdx.x) * UNROLL;
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
        long i = base + u;
        if (i < n) out[i] = alpha * x[i] + y[i];
    }
}

torch::Tensor scale_add_cuda(torch::Tensor x, torch::Tensor y, double alpha) {
    TORCH_CHECK(x.sizes() == y.sizes(), "x and y differ in shape");
    TORCH_CHECK(x.scalar_type() == y.scalar_type(), "x and y differ in dtype");
    auto xc = x.contiguous();
    auto yc = y.contiguous();
    auto out = torch::empty_like(xc);
    long n = xc.numel();
    const int threads = 128;
    if (xc.scalar_type() == torch::kFloat32) {
        int blocks = (int)((n + threads * 4 - 1) / (threads * 4));
        scale_add_kernel<float, 4><<<blocks, threads>>>(xc.data_ptr<float>(), yc.data_ptr<float>(),
                                                        out.data_ptr<float>(), (float)alpha, n);
    } else if (xc.scalar_type() == torch::kFloat64) {
        int blocks = (int)((n + threads * 2 - 1) / (threads * 2));
        scale_add_kernel<double, 2><<<blocks, threads>>>(xc.data_ptr<double>(), yc.data_ptr<double>(),
                                                         out.data_ptr<double>(), alpha, n);
    } else {
        TORCH_CHECK(false, "unsupported dtype ", xc.scalar_type());
    }
    return out;
}
"""

cpp_source = "torch::Tensor scale_add_cuda(torch::Tensor x, torch::Tensor y, double alpha);"

module = load_inline(
    name="templated_scale_add",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["scale_add_cuda"],
)


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x, y, x64, y64):
        return module.scale_add_cuda(x, y, 0.5), module.scale_add_cuda(x64, y64, -1.25)


def get_inputs():
    return [torch.randn(10001, device="cuda"), torch.randn(10001, device="cuda"),
            torch.randn(777, 3, device="cuda", dtype=torch.float64),
            torch.randn(777, 3, device="cuda", dtype=torch.float64)]


def get_init_inputs():
    return []
