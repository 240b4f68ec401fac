# A Triton decoy: it defines a @triton.jit kernel but never launches it, and computes the ReLU
# with torch. Correct, and none of its device time is its own kernels' (share 0).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.maximum(tl.load(x_ptr + offsets, mask=mask), 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.linear = nn.Linear(features, features)
        self.kernel = relu_kernel  # named, never launched

    def forward(self, x):
        return torch.relu(self.linear(x))
