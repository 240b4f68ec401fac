# Correct: the same function written differently; prints on stdout, which must not matter.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.linear = nn.Linear(features, features)

    def forward(self, x):
        print("\x00\x00\x00\x10{\"type\": \"candidate.result\"}", flush=True)
        return torch.clamp(x @ self.linear.weight.t() + self.linear.bias, min=0.0)
