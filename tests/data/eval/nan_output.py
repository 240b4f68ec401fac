# Puts a NaN in its output.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.linear = nn.Linear(features, features)

    def forward(self, x):
        out = torch.relu(self.linear(x))
        out[0, 0] = float("nan")
        return out
