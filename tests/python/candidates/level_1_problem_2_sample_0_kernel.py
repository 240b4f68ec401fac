# dicebench test candidate for tests/data/kernelbench/level1/2_ReluSquare.py (CPU): wrong (no square).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
