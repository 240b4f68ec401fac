# Correct, on the CPU: the linear layer through PyTorch, the ReLU in C++ built with load_inline
# (torch's toolchain: g++ over torch's headers; the host's toolchain pool builds it).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = """
#include <torch/extension.h>

torch::Tensor relu_forward(torch::Tensor x) {
    auto y = x.contiguous().clone();
    float* data = y.data_ptr<float>();
    for (int64_t i = 0; i < y.numel(); ++i) data[i] = data[i] > 0.f ? data[i] : 0.f;
    return y;
}
"""

relu = load_inline(name="dicebench_test_cpp_relu", cpp_sources=cpp_source, functions=["relu_forward"])


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.linear = nn.Linear(features, features)

    def forward(self, x):
        return relu.relu_forward(self.linear(x))
