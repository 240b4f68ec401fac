# fastpath-test: functions=scale_rows_cuda expect=nvrtc
# A launch on the current CUDA stream with dynamic shared memory (all four launch parameters), a
# cudaFuncSetAttribute on the kernel, the device guard, and a launch-error check.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

__global__ void scale_rows_kernel(const float* __restrict__ x, const float* __restrict__ scale,
                                  float* __restrict__ y, int cols) {
    extern __shared__ float row[];
    const float* src = x + (size_t)blockIdx.x * cols;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) row[c] = src[c];
    __syncthreads();
    float s = scale[blockIdx.x];
    for (int c = threadIdx.x; c < cols; c += blockDim.x) y[(size_t)blockIdx.x * cols + c] = row[cols - 1 - c] * s;
}

torch::Tensor scale_rows_cuda(torch::Tensor x, torch::Tensor scale) {
    const at::cuda::OptionalCUDAGuard device_guard(device_of(x));
    TORCH_CHECK(x.dim() == 2 && scale.dim() == 1 && scale.size(0) == x.size(0), "bad shapes");
    auto xc = x.contiguous();
    auto sc = scale.contiguous();
    auto y = torch::empty_like(xc);
    const int cols = xc.size(1);
    const size_t smem = cols * sizeof(float);
    if (smem > 48 * 1024) {
        C10_CUDA_CHECK(cudaFuncSetAttribute(scale_rows_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    }
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    scale_rows_kernel<<<xc.size(0), 256, smem, stream>>>(xc.data_ptr<float>(), sc.data_ptr<float>(),
                                                        y.data_ptr<float>(), cols);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor scale_rows_cuda(torch::Tensor x, torch::Tensor scale);"

module = load_inline(
    name="current_stream_scale_rows",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["scale_rows_cuda"],
)


class ModelNew(nn.Module):
    def forward(self, x, scale):
        # Work on a side stream: the kernel must run on it, and the result be ready after it.
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            y = module.scale_rows_cuda(x, scale)
        torch.cuda.current_stream().wait_stream(side)
        return y


def get_inputs():
    return [torch.randn(300, 20000, device="cuda"), torch.randn(300, device="cuda")]


def get_init_inputs():
    return []
