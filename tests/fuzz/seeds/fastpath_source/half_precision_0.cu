
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
