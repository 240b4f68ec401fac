# A Triton kernel that stores a terabyte past its output, unmasked: an illegal address on the GPU,
# which must be charged to this candidate alone.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offsets, mask=offsets < n)
    tl.store(out_ptr + 1099511627776 + offsets, tl.maximum(x, 0.0))


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.linear = nn.Linear(features, features)

    def forward(self, x):
        y = self.linear(x).contiguous()
        out = torch.empty_like(y)
        relu_kernel[(triton.cdiv(y.numel(), 128),)](y, out, y.numel(), BLOCK=128)
        return out
