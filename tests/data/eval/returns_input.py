# Returns its input unchanged: right only where the output equals the input.
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return x
