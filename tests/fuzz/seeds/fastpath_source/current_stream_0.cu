
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
