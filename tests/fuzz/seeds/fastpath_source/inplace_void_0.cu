
#include <torch/extension.h>

__global__ void relu_inplace_kernel(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] < 0.f) x[i] = 0.f;
}

__global__ void count_positive_kernel(const float* x, unsigned long long* count, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] > 0.f) atomicAdd(count, 1ull);
}

void relu_inplace_cuda(torch::Tensor& x) {
    TORCH_CHECK(x.is_contiguous(), "x must be contiguous");
    int n = x.numel();
    relu_inplace_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), n);
}

int64_t count_positive_cuda(const torch::Tensor& x) {
    auto count = torch::zeros({1}, x.options().dtype(torch::kInt64));
    int n = x.numel();
    count_positive_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(),
        reinterpret_cast<unsigned long long*>(count.data_ptr<int64_t>()), n);
    return count.item<int64_t>();
}
