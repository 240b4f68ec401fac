# A hostile candidate that rewrites what its own worker sends: its timing reply drops the timing
# and its forward replies claim a trial number that is not a number.
import torch.nn as nn

import dicebench_harness.protocol as protocol

_write_frame = protocol.write_frame


def write_frame(fd, message, **kwargs):
    if isinstance(message, dict) and message.get("type") == "candidate.timed":
        message = {k: v for k, v in message.items() if k != "timing"} | {"stopped": False, "profile": {"busy_ms": []}}
    if isinstance(message, dict) and message.get("type") == "candidate.loaded":
        message = dict(message, compile={"path": 7, "seconds": "long", "records": {}})
    return _write_frame(fd, message, **kwargs)


protocol.write_frame = write_frame
protocol.validate_reply = lambda message: message


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.linear = nn.Linear(features, features)

    def forward(self, x):
        return self.linear(x).relu()
