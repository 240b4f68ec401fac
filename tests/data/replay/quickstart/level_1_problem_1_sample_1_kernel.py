# Quickstart candidate for 1_Add: answers from a cache keyed on the input's shape once it has seen
# a few calls (as a cache on the input's pointer does): its stale answers fail a checked timed call.
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls, self.answers = 0, {}

    def forward(self, x, y):
        self.calls += 1
        if self.calls > 6 and x.shape in self.answers:
            return self.answers[x.shape]
        self.answers[x.shape] = x + y
        return self.answers[x.shape]
