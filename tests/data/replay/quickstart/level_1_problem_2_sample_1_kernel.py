# Quickstart candidate for 2_ReluSquare: forgets the ReLU (negative inputs give wrong squares).
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return x * x
