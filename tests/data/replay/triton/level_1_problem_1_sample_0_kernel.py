# Level 1 problem 1 (Add) in Triton, under other names: the module imported as tr, the language
# from it, the kernel launched through an attribute. The backend check reads it as Triton. (The
# language keeps the name tl: Triton reads a constexpr annotation by that spelling.)
import torch
import triton as tr
from triton import language as tl


@tr.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.launch = add_kernel

    def forward(self, x, y):
        x, y = x.contiguous(), y.contiguous()
        out = torch.empty_like(x)
        self.launch[(tr.cdiv(x.numel(), 256),)](x, y, out, x.numel(), BLOCK=256)
        return out
