# dicebench test problem: a linear layer followed by ReLU whose constructor notes each build of the
# reference in the file DICEBENCH_TEST_BUILD_LOG names (tests of per-problem work count the lines).
import os

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.linear = nn.Linear(features, features)
        if os.environ.get("DICEBENCH_TEST_BUILD_LOG"):
            with open(os.environ["DICEBENCH_TEST_BUILD_LOG"], "a") as log:
                log.write("built\n")

    def forward(self, x):
        return torch.relu(self.linear(x))


def get_inputs():
    return [torch.randn(16, 32)]


def get_init_inputs():
    return [32]
