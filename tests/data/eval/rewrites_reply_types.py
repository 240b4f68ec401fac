# A hostile candidate that rewrites what its own worker sends: its forward's reply says
# aliases_input "yes" (a string where the protocol has a boolean), past the worker's own checks.
import torch.nn as nn

import dicebench_harness.protocol as protocol

_write_frame = protocol.write_frame


def write_frame(fd, message, **kwargs):
    if isinstance(message, dict) and message.get("type") == "candidate.outputs":
        message = dict(message, aliases_input="yes")
    return _write_frame(fd, message, **kwargs)


protocol.write_frame = write_frame
protocol.validate_reply = lambda message: message


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.linear = nn.Linear(features, features)

    def forward(self, x):
        return self.linear(x).relu()
