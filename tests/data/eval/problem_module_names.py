# dicebench test problem written as KernelBench writes its problems: sizes and a constant at module
# level, read by Model and get_inputs (a linear layer, ReLU, then a scale).
import torch
import torch.nn as nn

batch_size = 16
features = 32
scale = 0.5


class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.linear = nn.Linear(features, features)

    def forward(self, x):
        return torch.relu(self.linear(x)) * scale


def get_inputs():
    return [torch.randn(batch_size, features)]


def get_init_inputs():
    return [features]
