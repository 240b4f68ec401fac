# fastpath-test: functions=fused_ops,stats expect=nvrtc
# No CUDA source at all: C++ host code composed of ATen operators (through the shim's table).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
#include <torch/extension.h>
#include <vector>

torch::Tensor fused_ops(torch::Tensor x, torch::Tensor w, double scale, int64_t dim) {
    auto h = torch::matmul(x, w.transpose(0, 1).contiguous());
    h = torch::relu(h) * scale + 1.0;
    auto s = torch::softmax(h, dim);
    auto parts = std::vector<torch::Tensor>{s, h.sum({1}, /*keepdim=*/true)};
    auto joined = torch::cat(parts, 1);
    auto z = torch::zeros({joined.size(0), 2}, joined.options());
    z.fill_(0.25);
    return torch::cat({joined, z}, 1).view({-1}).reshape({joined.size(0), -1}).clone();
}

std::vector<torch::Tensor> stats(std::vector<torch::Tensor> xs, bool keepdim) {
    std::vector<torch::Tensor> out;
    for (const auto& x : xs) {
        auto m = x.mean({0}, keepdim);
        auto mx = std::get<0>(x.max(0, keepdim));
        out.push_back(m);
        out.push_back(mx);
        out.push_back(torch::full({1}, (double)x.numel(), x.options()));
    }
    return out;
}
"""

module = load_inline(
    name="cpp_only_ops",
    cpp_sources=[cpp_source],
    functions=["fused_ops", "stats"],
)


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.randn(48, 32))

    def forward(self, x):
        y = module.fused_ops(x, self.w.to(x.device), 0.5, -1)
        return [y] + module.stats([x, y], True)


def get_inputs():
    return [torch.randn(64, 32, device="cuda")]


def get_init_inputs():
    return []
