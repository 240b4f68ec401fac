# Quickstart candidate for level 3's 1_TinyMLP: right, both layers' products through PyTorch, the
# first layer's bias and ReLU in one Triton kernel (its layers are made in the reference's order, so
# they get the reference's weights).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def bias_relu_kernel(x_ptr, bias_ptr, out_ptr, n, cols, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    y = tl.load(x_ptr + offsets, mask=mask) + tl.load(bias_ptr + offsets % cols, mask=mask)
    tl.store(out_ptr + offsets, tl.maximum(y, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, hidden, out_features):
        super().__init__()
        self.first = nn.Linear(in_features, hidden)
        self.second = nn.Linear(hidden, out_features)

    def forward(self, x):
        product = torch.mm(x, self.first.weight.t()).contiguous()
        hidden = torch.empty_like(product)
        bias_relu_kernel[(triton.cdiv(product.numel(), 256),)](product, self.first.bias, hidden, product.numel(),
                                                               product.shape[1], BLOCK=256)
        return torch.addmm(self.second.bias, hidden, self.second.weight.t())
