# Quickstart candidate for 10_RowSum: its Triton kernel sums each column, the wrong dimension (a
# shape mismatch).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def column_sum_kernel(x_ptr, out_ptr, cols, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    columns = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = columns < cols
    total = tl.zeros([BLOCK], dtype=tl.float32)
    for row in range(ROWS):
        total += tl.load(x_ptr + row * cols + columns, mask=mask, other=0.0)
    tl.store(out_ptr + columns, total, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        x = x.contiguous()
        rows, cols = x.shape
        out = torch.empty(cols, dtype=x.dtype, device=x.device)
        column_sum_kernel[(triton.cdiv(cols, 128),)](x, out, cols, ROWS=rows, BLOCK=128)
        return out
