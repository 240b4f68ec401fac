# Defines a Model of its own, unlike the problem's (no constructor arguments, ReLU alone), and uses
# it: the candidate's definitions override the problem's, as in KernelBench, where its source runs
# after the problem's in one namespace. It reads the problem's scale, defined only there. For
# problem_module_names.py: with the problem's Model, Model() would raise (it takes `features`).
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.clamp(x, min=0.0)


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.linear = nn.Linear(features, features)
        self.relu = Model()

    def forward(self, x):
        return self.relu(self.linear(x)) * scale  # the problem's
