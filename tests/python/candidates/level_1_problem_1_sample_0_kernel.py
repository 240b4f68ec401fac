# dicebench test candidate for tests/data/kernelbench/level1/1_Add.py (CPU): correct.
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        return y + x
