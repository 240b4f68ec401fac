# A load_inline candidate that the NVRTC fast path fails and torch's toolchain passes: its host
# function returns a uint64_t of 2**63 or more, which the fast path hands back negative (a known
# defect of its value conversion; when that is fixed, this candidate needs another such difference).
# torch's build returns it positive, so only the fast path raises: the evaluator must re-judge it
# with torch's toolchain, keep that verdict and flag the disagreement.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
#include <torch/extension.h>
#include <cstdint>

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, long n) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}

torch::Tensor relu_forward(torch::Tensor x) {
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    long n = xc.numel();
    relu_kernel<<<(int)((n + 255) / 256), 256>>>(xc.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}

uint64_t block_budget() { return (uint64_t(1) << 63) + 5; }
"""

ext = load_inline(
    name="dicebench_test_disagrees",
    cpp_sources="torch::Tensor relu_forward(torch::Tensor x);\nuint64_t block_budget();",
    cuda_sources=cuda_source,
    functions=["relu_forward", "block_budget"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.linear = nn.Linear(features, features)

    def forward(self, x):
        if ext.block_budget() < 0:
            raise RuntimeError("the extension's budget came back negative")
        return ext.relu_forward(self.linear(x))
