# fastpath-test: functions=gemm_cuda expect=nvrtc
# cuBLAS called from host code (torch's handle), next to a small bias kernel.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cublas_v2.h>

__global__ void add_bias_kernel(float* y, const float* bias, int rows, int cols) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows * cols) y[i] += bias[i % cols];
}

torch::Tensor gemm_cuda(torch::Tensor a, torch::Tensor b, torch::Tensor bias) {
    auto A = a.contiguous();
    auto B = b.contiguous();
    const int m = A.size(0), k = A.size(1), n = B.size(1);
    auto C = torch::empty({m, n}, A.options());
    cublasHandle_t handle = at::cuda::getCurrentCUDABlasHandle();
    const float alpha = 1.0f, beta = 0.0f;
    // Row-major C = A B is column-major C^T = B^T A^T.
    TORCH_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, B.data_ptr<float>(), n,
                            A.data_ptr<float>(), k, &beta, C.data_ptr<float>(), n) == CUBLAS_STATUS_SUCCESS,
                "cublasSgemm failed");
    const int total = m * n;
    add_bias_kernel<<<(total + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        C.data_ptr<float>(), bias.data_ptr<float>(), m, n);
    return C;
}
"""

cpp_source = "torch::Tensor gemm_cuda(torch::Tensor a, torch::Tensor b, torch::Tensor bias);"

module = load_inline(
    name="cublas_gemm",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["gemm_cuda"],
    extra_ldflags=["-lcublas"],
)


class ModelNew(nn.Module):
    def forward(self, a, b, bias):
        return module.gemm_cuda(a, b, bias)


def get_inputs():
    return [torch.randn(128, 64, device="cuda"), torch.randn(64, 96, device="cuda"), torch.randn(96, device="cuda")]


def get_init_inputs():
    return []
