import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, b):
        return a + b
