# Quickstart candidate for level 2's 1_MatmulRelu: wrong, it forgets the ReLU.
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return self.linear(x)
