# fastpath-test: functions=tensors_cuda,strided_sum_cuda expect=nvrtc
# torch::tensor from host code: an IntArrayRef on the input's device (as DICE's reference kernels
# make size and stride tables for a kernel), braced lists (integers: kLong; floating: the default
# dtype), a nested list with the input's options, scalars, std::vectors with a dtype and device,
# and an empty list.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <vector>

__global__ void strided_sum_kernel(const float* x, const int64_t* sizes, const int64_t* strides, int dim,
                                   float* out) {
    // Sums x over all its elements, walking its sizes and strides (one thread: a small test).
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    int64_t total = 1;
    for (int d = 0; d < dim; ++d) total *= sizes[d];
    float acc = 0.f;
    for (int64_t i = 0; i < total; ++i) {
        int64_t rest = i, offset = 0;
        for (int d = dim - 1; d >= 0; --d) {
            offset += (rest % sizes[d]) * strides[d];
            rest /= sizes[d];
        }
        acc += x[offset];
    }
    out[0] = acc;
}

std::vector<torch::Tensor> tensors_cuda(torch::Tensor x) {
    std::vector<torch::Tensor> out;
    out.push_back(torch::tensor(x.sizes(), x.options().dtype(torch::kLong)));
    out.push_back(torch::tensor(x.strides()));
    out.push_back(torch::tensor({1, 2, 3}));
    out.push_back(torch::tensor({1.5f, -2.25f}));
    out.push_back(torch::tensor({{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}}, x.options()));
    out.push_back(torch::tensor({{true}, {false}}));
    out.push_back(torch::tensor(2.5));
    out.push_back(torch::tensor(7, torch::kInt16));
    out.push_back(torch::tensor(true));
    out.push_back(torch::tensor(static_cast<uint8_t>(200)));
    out.push_back(torch::tensor(std::vector<float>{0.5f, 0.25f}, torch::dtype(torch::kFloat64).device(x.device())));
    out.push_back(torch::tensor(std::vector<int>{4, 5, 6}));
    out.push_back(torch::tensor(std::vector<double>{}));
    out.push_back(torch::tensor({}));
    return out;
}

torch::Tensor strided_sum_cuda(torch::Tensor x) {
    auto sizes = torch::tensor(x.sizes(), x.options().dtype(torch::kLong));
    auto strides = torch::tensor(x.strides(), x.options().dtype(torch::kLong));
    auto out = torch::zeros({1}, x.options());
    strided_sum_kernel<<<1, 1>>>(x.data_ptr<float>(), sizes.data_ptr<int64_t>(), strides.data_ptr<int64_t>(),
                                 x.dim(), out.data_ptr<float>());
    return out;
}
"""

cpp_source = r"""
std::vector<torch::Tensor> tensors_cuda(torch::Tensor x);
torch::Tensor strided_sum_cuda(torch::Tensor x);
"""

module = load_inline(
    name="tensor_factory",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["tensors_cuda", "strided_sum_cuda"],
)


class ModelNew(nn.Module):
    def forward(self, x):
        tensors = module.tensors_cuda(x)
        devices = torch.tensor([t.is_cuda for t in tensors])
        return (*tensors, devices, module.strided_sum_cuda(x.transpose(0, 1)))


def get_inputs():
    return [torch.arange(24, dtype=torch.float32, device="cuda").reshape(2, 3, 4)]


def get_init_inputs():
    return []
