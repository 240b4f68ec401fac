# Quickstart candidate for level 2's 1_MatmulRelu: right, the product and its bias in one addmm,
# then a clamp (the layer is made in the reference's order, so it gets the reference's weights).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.addmm(self.linear.bias, x, self.linear.weight.t()).clamp(min=0)
