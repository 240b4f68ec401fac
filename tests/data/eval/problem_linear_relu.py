# dicebench test problem: a linear layer followed by ReLU (weights from get_init_inputs' seed).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.linear = nn.Linear(features, features)

    def forward(self, x):
        return torch.relu(self.linear(x))


def get_inputs():
    return [torch.randn(16, 32)]


def get_init_inputs():
    return [32]
