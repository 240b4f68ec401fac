# dicebench test problem: ReLU of 2 GiB of torch.rand inputs (its output equals its input), large
# enough that moving it takes a GPU about a millisecond, far longer than a call that does no work.
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.rand(8192, 65536)]


def get_init_inputs():
    return []
