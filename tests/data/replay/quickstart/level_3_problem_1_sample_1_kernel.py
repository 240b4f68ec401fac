# Quickstart candidate for level 3's 1_TinyMLP: fails at run time, its second layer takes the
# input's width instead of the hidden width (the ReLU between them a Triton kernel).
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
    def __init__(self, in_features, hidden, out_features):
        super().__init__()
        self.first = nn.Linear(in_features, hidden)
        self.second = nn.Linear(in_features, out_features)

    def forward(self, x):
        y = self.first(x).contiguous()
        hidden = torch.empty_like(y)
        relu_kernel[(triton.cdiv(y.numel(), 256),)](y, hidden, y.numel(), BLOCK=256)
        return self.second(hidden)
