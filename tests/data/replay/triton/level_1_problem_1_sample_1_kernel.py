# Level 1 problem 1 (Add), a Triton decoy: the kernel is defined and stored, never launched; torch
# adds. Correct, and flagged backend_unused.
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets) + tl.load(y_ptr + offsets))


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.kernel = add_kernel

    def forward(self, x, y):
        return x + y
