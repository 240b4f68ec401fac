# Quickstart candidate for 2_ReluSquare: right, as one clamp and a multiply.
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        y = x.clamp(min=0)
        return y * y
