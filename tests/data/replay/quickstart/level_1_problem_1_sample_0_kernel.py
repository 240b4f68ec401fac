# Quickstart candidate for tests/data/kernelbench/level1/1_Add.py: right, written with torch.add.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        return torch.add(x, y)
