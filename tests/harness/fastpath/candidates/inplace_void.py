# fastpath-test: functions=relu_inplace_cuda,count_positive_cuda expect=nvrtc
# A void function that writes into its argument (a non-const reference), an int result, atomics.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
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
"""

cpp_source = r"""
void relu_inplace_cuda(torch::Tensor& x);
int64_t count_positive_cuda(const torch::Tensor& x);
"""

module = load_inline(
    name="inplace_void",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions={"relu_inplace_cuda": "in-place relu", "count_positive_cuda": "count"},
)


class ModelNew(nn.Module):
    def forward(self, x):
        y = x.clone()
        module.relu_inplace_cuda(y)
        n = module.count_positive_cuda(x)
        return y, torch.tensor([n], device=x.device)


def get_inputs():
    return [torch.randn(5000, device="cuda")]


def get_init_inputs():
    return []
