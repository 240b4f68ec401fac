# fastpath_disagrees.py's extension with its failing call made as the module loads: the fast
# path's failure (a runtime_error at load) is known before the GPU takes the candidate, so its
# re-judge with torch's toolchain starts then; torch's build loads, and the verdict is that
# build's. The load_inline call is fastpath_disagrees.py's: torch's toolchain builds it once for both.
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

if ext.block_budget() < 0:
    raise RuntimeError("the extension's budget came back negative")


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.linear = nn.Linear(features, features)

    def forward(self, x):
        return ext.relu_forward(self.linear(x))
