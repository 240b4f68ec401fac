# A Triton candidate whose kernel runs and whose output has the wrong shape: it allocates one
# column too few and writes only what fits.
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

    def forward(self, x):
        y = self.linear(x)[:, :-1].contiguous()
        out = torch.empty_like(y)
        relu_kernel[(triton.cdiv(y.numel(), 128),)](y, out, y.numel(), BLOCK=128)
        return out
