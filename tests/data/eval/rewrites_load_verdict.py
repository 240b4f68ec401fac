# A hostile candidate that rewrites what its own worker sends as it loads: its module fails to
# load, and the reply says so with error class "almost_correct", a name outside the verdict
# vocabulary, past the worker's own checks.
import dicebench_harness.protocol as protocol

_write_frame = protocol.write_frame


def write_frame(fd, message, **kwargs):
    if isinstance(message, dict) and message.get("type") == "candidate.loaded":
        message = dict(message, ok=False, error_class="almost_correct", message="close enough")
    return _write_frame(fd, message, **kwargs)


protocol.write_frame = write_frame
protocol.validate_reply = lambda message: message
raise RuntimeError("this module does not load")
