# Quickstart candidate for 2_ReluSquare: its Triton kernel forgets the ReLU (negative inputs give
# wrong squares).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def square_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x * x, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        square_kernel[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)
        return out
