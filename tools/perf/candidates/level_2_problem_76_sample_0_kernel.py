import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

# The GEMM stays on cuBLAS (F.linear without bias); the bias add and ReLU are fused into one
# in-place pass over the GEMM output, vectorised with float4 when the row length allows it.
bias_relu_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <c10/cuda/CUDAException.h>

__global__ void bias_relu_vec4_kernel(float4* __restrict__ y, const float4* __restrict__ bias,
                                      int64_t total4, int64_t cols4) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total4;
         i += (int64_t)gridDim.x * blockDim.x) {
        float4 v = y[i];
        const float4 b = bias[i % cols4];
        v.x = fmaxf(v.x + b.x, 0.0f);
        v.y = fmaxf(v.y + b.y, 0.0f);
        v.z = fmaxf(v.z + b.z, 0.0f);
        v.w = fmaxf(v.w + b.w, 0.0f);
        y[i] = v;
    }
}

__global__ void bias_relu_kernel(float* __restrict__ y, const float* __restrict__ bias, int64_t total, int64_t cols) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        y[i] = fmaxf(y[i] + bias[i % cols], 0.0f);
    }
}

torch::Tensor bias_relu_cuda(torch::Tensor y, torch::Tensor bias) {
    TORCH_CHECK(y.is_cuda() && bias.is_cuda(), "inputs must be CUDA tensors");
    TORCH_CHECK(y.dim() == 2 && bias.dim() == 1 && y.size(1) == bias.size(0), "bias must match the last dim");
    TORCH_CHECK(y.is_contiguous(), "GEMM output must be contiguous");
    auto b = bias.contiguous();
    const int64_t cols = y.size(1);
    const int64_t total = y.numel();
    const int threads = 256;
    if (cols % 4 == 0) {
        const int64_t total4 = total / 4;
        int blocks = (int)std::min<int64_t>((total4 + threads - 1) / threads, 8192);
        bias_relu_vec4_kernel<<<blocks, threads>>>(reinterpret_cast<float4*>(y.data_ptr<float>()),
                                                   reinterpret_cast<const float4*>(b.data_ptr<float>()),
                                                   total4, cols / 4);
    } else {
        int blocks = (int)std::min<int64_t>((total + threads - 1) / threads, 8192);
        bias_relu_kernel<<<blocks, threads>>>(y.data_ptr<float>(), b.data_ptr<float>(), total, cols);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

bias_relu_cpp_source = "torch::Tensor bias_relu_cuda(torch::Tensor y, torch::Tensor bias);"

bias_relu = load_inline(
    name="gemm_bias_relu_epilogue",
    cpp_sources=bias_relu_cpp_source,
    cuda_sources=bias_relu_source,
    functions=["bias_relu_cuda"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super(ModelNew, self).__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        y = F.linear(x, self.gemm.weight)
        return bias_relu.bias_relu_cuda(y, self.bias)
