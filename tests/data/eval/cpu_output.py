# Computes the right answer and hands it back on the CPU, whatever device its inputs are on.
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.linear = nn.Linear(features, features)

    def forward(self, x):
        return (self.linear(x).relu()).cpu()
