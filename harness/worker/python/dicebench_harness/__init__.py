"""dicebench_harness: the Python side of dicebench-worker (see harness/PROTOCOL.md).

Modules, one concern each:
  protocol   framing and the field lists of every request and reply (torch-free)
  worker     serve(): hello, the request loop, dispatch by role, error replies
  reference  the reference role: Model, inputs, kept outputs, compare, baseline timing
  candidate  the candidate role: ModelNew, outputs to files, timing, timed-output checks
  loading    source text -> fresh module; finding Model/ModelNew and the input functions
  compare    verdicts: structure, shape, dtype, tolerances, NaN/Inf rules
  timing     adaptive timing with an order-statistic confidence interval of the median
  numerics   the global numeric settings applied before every call
  seeding    seed_everything()
  devices    device strings, selection, the request-device check
  tensors    trees of tensors: to a device, cloned, saved (mode 0600); device sync
  errors     HostError and traceback tails
  client     a Python host for tests and tools: spawns `python -m dicebench_harness`
"""
