# A matrix product (256 x 512) @ (512 x 128) in fp32, for candidates whose kernel is a tiled matmul.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(256, 512), torch.randn(512, 128)]


def get_init_inputs():
    return []
