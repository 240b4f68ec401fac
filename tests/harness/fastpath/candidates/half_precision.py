# fastpath-test: functions=half_gelu_cuda expect=nvrtc
# fp16 through cuda_fp16.h intrinsics (torch's nvcc defines forbid the __half operators), with
# at::Half pointers reinterpreted as __half.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_fp16.h>

__global__ void half_gelu_kernel(const __half* __restrict__ x, __half* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = __half2float(x[i]);
        float g = 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
        y[i] = __float2half(g);
    }
}

torch::Tensor half_gelu_cuda(torch::Tensor x) {
    TORCH_CHECK(x.scalar_type() == at::kHalf, "expects float16");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    int n = xc.numel();
    half_gelu_kernel<<<(n + 255) / 256, 256>>>(reinterpret_cast<const __half*>(xc.data_ptr<at::Half>()),
                                               reinterpret_cast<__half*>(y.data_ptr<at::Half>()), n);
    return y;
}
"""

cpp_source = "torch::Tensor half_gelu_cuda(torch::Tensor x);"

module = load_inline(
    name="half_gelu",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["half_gelu_cuda"],
)


class ModelNew(nn.Module):
    def forward(self, x):
        return module.half_gelu_cuda(x)


def get_inputs():
    return [torch.randn(4096, 17, device="cuda", dtype=torch.float16)]


def get_init_inputs():
    return []
