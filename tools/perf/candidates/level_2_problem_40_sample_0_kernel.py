import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# y = x W^T with cublasSgemm on PyTorch's cuBLAS handle, then one epilogue kernel that adds the bias
# and applies the scaling + residual add: out = v * s + v with v = y + b (original_x is just v).
linear_scale_residual_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void bias_scale_residual_kernel(float* __restrict__ y, const float* __restrict__ bias,
                                           float scale, int64_t total, int cols) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        const float v = y[i] + bias[i % cols];
        y[i] = v * scale + v;
    }
}

torch::Tensor linear_scale_residual_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double scale) {
    TORCH_CHECK(x.is_cuda() && weight.is_cuda() && bias.is_cuda(), "inputs must be CUDA tensors");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "float32 only");
    auto X = x.contiguous();
    auto W = weight.contiguous();
    auto b = bias.contiguous();
    const int M = X.size(0), K = X.size(1), N = W.size(0);
    TORCH_CHECK(W.size(1) == K, "weight does not match in_features");
    auto Y = torch::empty({M, N}, X.options());

    // Row-major Y[M,N] = X[M,K] * W[N,K]^T  <=>  column-major Y^T[N,M] = W^T-as-stored^T * X^T.
    cublasHandle_t handle = at::cuda::getCurrentCUDABlasHandle();
    const float alpha = 1.0f, beta = 0.0f;
    cublasStatus_t status = cublasSgemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &alpha,
                                        W.data_ptr<float>(), K, X.data_ptr<float>(), K,
                                        &beta, Y.data_ptr<float>(), N);
    TORCH_CHECK(status == CUBLAS_STATUS_SUCCESS, "cublasSgemm failed with status ", (int)status);

    const int64_t total = (int64_t)M * N;
    const int threads = 256;
    const int blocks = (int)std::min<int64_t>((total + threads - 1) / threads, 16384);
    bias_scale_residual_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        Y.data_ptr<float>(), b.data_ptr<float>(), (float)scale, total, N);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return Y;
}
"""

linear_scale_residual_cpp_source = (
    "torch::Tensor linear_scale_residual_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double scale);"
)

linear_scale_residual = load_inline(
    name="cublas_linear_scale_residual",
    cpp_sources=linear_scale_residual_cpp_source,
    cuda_sources=linear_scale_residual_source,
    functions=["linear_scale_residual_cuda"],
    extra_cuda_cflags=["-O3"],
    extra_ldflags=["-lcublas"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scaling_factor):
        super(ModelNew, self).__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        return linear_scale_residual.linear_scale_residual_cuda(x, self.matmul.weight, self.matmul.bias,
                                                                self.scaling_factor)
