# Quickstart candidate for 1_Add: its Triton kernel's answers are kept in a cache keyed on the input's
# shape once it has seen a few calls (as a cache on the input's pointer does): its stale answers pass
# every correctness trial and fail a checked timed call.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls, self.answers = 0, {}

    def forward(self, x, y):
        self.calls += 1
        if self.calls > 6 and x.shape in self.answers:
            return self.answers[x.shape]
        x, y = x.contiguous(), y.contiguous()
        out = torch.empty_like(x)
        add_kernel[(triton.cdiv(x.numel(), 256),)](x, y, out, x.numel(), BLOCK=256)
        self.answers[x.shape] = out
        return out
