# A hostile candidate that rewrites what its own worker sends: its forward replies say it failed
# with error class "almost_correct", a name outside the verdict vocabulary, past the worker's own
# checks. Before, the host stored such a name as runtime_error.
import torch.nn as nn

import dicebench_harness.protocol as protocol

_write_frame = protocol.write_frame


def write_frame(fd, message, **kwargs):
    if isinstance(message, dict) and message.get("type") == "candidate.outputs":
        message = dict(message, ok=False, error_class="almost_correct", message="close enough", outputs=None)
    return _write_frame(fd, message, **kwargs)


protocol.write_frame = write_frame
protocol.validate_reply = lambda message: message


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.linear = nn.Linear(features, features)

    def forward(self, x):
        return self.linear(x).relu()
