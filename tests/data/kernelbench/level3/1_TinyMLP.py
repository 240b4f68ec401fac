import torch
import torch.nn as nn


class Model(nn.Module):
    """A two-layer perceptron: linear, ReLU, linear."""

    def __init__(self, in_features, hidden, out_features):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_features, hidden), nn.ReLU(), nn.Linear(hidden, out_features))

    def forward(self, x):
        return self.net(x)


def get_inputs():
    return [torch.randn(4, 16)]


def get_init_inputs():
    return [16, 32, 8]
