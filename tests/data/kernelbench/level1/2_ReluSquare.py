import torch
import torch.nn as nn


class Model(nn.Module):
    """relu(x) squared; the config dict below has braces: {"k": 1}."""

    def __init__(self):
        super().__init__()
        self.config = {"power": 2}

    def forward(self, x):
        return torch.relu(x) ** self.config["power"]


def get_inputs():
    return [torch.randn(8, 64)]


def get_init_inputs():
    return []
