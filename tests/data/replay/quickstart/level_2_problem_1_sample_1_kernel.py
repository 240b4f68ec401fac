# Quickstart candidate for level 2's 1_MatmulRelu: wrong, its Triton kernel adds the bias and
# forgets the ReLU.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def bias_kernel(x_ptr, bias_ptr, out_ptr, n, cols, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(bias_ptr + offsets % cols, mask=mask),
             mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        product = torch.mm(x, self.linear.weight.t()).contiguous()
        out = torch.empty_like(product)
        bias_kernel[(triton.cdiv(product.numel(), 256),)](product, self.linear.bias, out, product.numel(),
                                                          product.shape[1], BLOCK=256)
        return out
