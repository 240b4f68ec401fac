# fastpath-test: functions=workspace_scale_cuda,lt_linear_cuda expect=nvrtc
# torch's CUDA caching allocator from host code (c10/cuda/CUDACachingAllocator.h): a DataPtr
# workspace (and a 0-byte one), raw_alloc, raw_alloc_with_stream and raw_delete; and cuBLASLt on
# torch's handle with an allocator workspace, as some of DICE's reference kernels do. The model
# also returns how much memory the calls left allocated besides their results (torch's cuBLAS
# workspace, the first time): the same on both paths, if every allocation went back.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <cublasLt.h>

__global__ void scale_kernel(const float* x, float* out, float s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = s * x[i];
}

__global__ void add_kernel(const float* a, const float* b, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}

torch::Tensor workspace_scale_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.is_contiguous() && x.scalar_type() == torch::kFloat, "x: contiguous CUDA float");
    const int n = x.numel();
    const size_t bytes = n * sizeof(float);
    const int blocks = (n + 255) / 256;
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    auto out = torch::empty_like(x);
    auto workspace = c10::cuda::CUDACachingAllocator::get()->allocate(bytes);
    TORCH_CHECK(workspace && workspace.get() != nullptr, "no workspace");
    TORCH_CHECK(workspace.device() == x.device(), "workspace on ", workspace.device(), ", x on ", x.device());
    auto none = c10::cuda::CUDACachingAllocator::get()->allocate(0);
    TORCH_CHECK(!none && none.get() == nullptr, "a 0-byte allocation holds memory");
    float* tmp = static_cast<float*>(workspace.get());
    float* raw = static_cast<float*>(c10::cuda::CUDACachingAllocator::raw_alloc(bytes));
    float* raw_on_stream = static_cast<float*>(c10::cuda::CUDACachingAllocator::raw_alloc_with_stream(bytes, stream));
    TORCH_CHECK(c10::cuda::CUDACachingAllocator::raw_alloc(0) == nullptr, "raw_alloc(0) gave memory");
    scale_kernel<<<blocks, 256, 0, stream>>>(x.data_ptr<float>(), tmp, 2.0f, n);
    scale_kernel<<<blocks, 256, 0, stream>>>(x.data_ptr<float>(), raw, 3.0f, n);
    add_kernel<<<blocks, 256, 0, stream>>>(tmp, raw, raw_on_stream, n);
    add_kernel<<<blocks, 256, 0, stream>>>(raw_on_stream, x.data_ptr<float>(), out.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    c10::cuda::CUDACachingAllocator::raw_delete(raw);
    c10::cuda::CUDACachingAllocator::raw_delete(raw_on_stream);
    // Given back now; the end of the scope then gives back nothing more.
    workspace.clear();
    TORCH_CHECK(!workspace && workspace.get() == nullptr, "a cleared DataPtr holds memory");
    return out;
}

// y = x w^T + b with cuBLASLt (bias epilogue) on torch's handle, workspace from the allocator.
torch::Tensor lt_linear_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias) {
    const int M = x.size(0), K = x.size(1), N = weight.size(0);
    auto y = torch::empty({M, N}, x.options());
    const float* bias_ptr = bias.data_ptr<float>();
    const float alpha = 1.f, beta = 0.f;
    cublasLtHandle_t handle = at::cuda::getCurrentCUDABlasLtHandle();
    cublasLtMatmulDesc_t desc;
    TORCH_CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F) == CUBLAS_STATUS_SUCCESS);
    cublasOperation_t trans_a = CUBLAS_OP_T, trans_b = CUBLAS_OP_N;
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &trans_a, sizeof(trans_a));
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &trans_b, sizeof(trans_b));
    cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue));
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias_ptr, sizeof(bias_ptr));
    cublasLtMatrixLayout_t a_desc, b_desc, c_desc;
    cublasLtMatrixLayoutCreate(&a_desc, CUDA_R_32F, K, N, K);
    cublasLtMatrixLayoutCreate(&b_desc, CUDA_R_32F, K, M, K);
    cublasLtMatrixLayoutCreate(&c_desc, CUDA_R_32F, N, M, N);
    size_t workspace_size = 1 << 20;
    auto workspace = c10::cuda::CUDACachingAllocator::get()->allocate(workspace_size);
    cublasStatus_t status = cublasLtMatmul(handle, desc, &alpha, weight.data_ptr<float>(), a_desc,
                                           x.data_ptr<float>(), b_desc, &beta, y.data_ptr<float>(), c_desc,
                                           y.data_ptr<float>(), c_desc, nullptr, workspace.get(), workspace_size,
                                           at::cuda::getCurrentCUDAStream());
    cublasLtMatrixLayoutDestroy(a_desc);
    cublasLtMatrixLayoutDestroy(b_desc);
    cublasLtMatrixLayoutDestroy(c_desc);
    cublasLtMatmulDescDestroy(desc);
    TORCH_CHECK(status == CUBLAS_STATUS_SUCCESS, "cublasLtMatmul: ", cublasGetStatusString(status));
    return y;
}
"""

cpp_source = r"""
torch::Tensor workspace_scale_cuda(torch::Tensor x);
torch::Tensor lt_linear_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias);
"""

module = load_inline(
    name="caching_allocator",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["workspace_scale_cuda", "lt_linear_cuda"],
)


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(96, 48)

    def forward(self, x, h):
        torch.cuda.synchronize()
        before = torch.cuda.memory_allocated()
        scaled = module.workspace_scale_cuda(x)
        y = module.lt_linear_cuda(h, self.linear.weight, self.linear.bias)
        torch.cuda.synchronize()
        left = torch.cuda.memory_allocated() - before - scaled.untyped_storage().nbytes() - y.untyped_storage().nbytes()
        return scaled, y, torch.tensor([left])


def get_inputs():
    return [torch.randn(4096, device="cuda"), torch.randn(64, 96, device="cuda")]


def get_init_inputs():
    return []
