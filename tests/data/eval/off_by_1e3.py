# Off by 1e-3: wrong under the per_dtype tolerance (1e-4 for fp32), right under uniform (1e-2).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.linear = nn.Linear(features, features)

    def forward(self, x):
        return torch.relu(self.linear(x)) + 1e-3
