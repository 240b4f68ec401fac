# A hostile candidate that rewrites what its own worker sends: its timing reply says the loop ran
# through and carries no timing (a candidate that wants no time taken of it).
import torch.nn as nn

import dicebench_harness.protocol as protocol

_write_frame = protocol.write_frame


def write_frame(fd, message, **kwargs):
    if isinstance(message, dict) and message.get("type") == "candidate.timed":
        message = dict(message, timing=None, stopped=False)
    return _write_frame(fd, message, **kwargs)


protocol.write_frame = write_frame
protocol.validate_reply = lambda message: message


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.linear = nn.Linear(features, features)

    def forward(self, x):
        return self.linear(x).relu()
