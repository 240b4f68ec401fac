# dicebench test candidate for tests/data/kernelbench/level1/10_RowSum.py (CPU): correct.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.sum(x, self.dim)
