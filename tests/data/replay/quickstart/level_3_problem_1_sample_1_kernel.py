# Quickstart candidate for level 3's 1_TinyMLP: fails at run time, its second layer takes the
# input's width instead of the hidden width.
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, hidden, out_features):
        super().__init__()
        self.first = nn.Linear(in_features, hidden)
        self.second = nn.Linear(in_features, out_features)

    def forward(self, x):
        return self.second(self.first(x).relu())
