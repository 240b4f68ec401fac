"""Small problems and candidates for the harness tests, written for these tests.

PROBLEM is a Linear + ReLU problem with init inputs; candidate(body) builds a ModelNew with the
same parameters (built under the same seed, so its weights equal the reference's) whose forward
is the given body, a statement list using self.lin and x.
"""

import textwrap

PROBLEM = textwrap.dedent('''
    import torch
    import torch.nn as nn

    in_features = 16
    out_features = 8
    batch = 4


    class Model(nn.Module):
        def __init__(self, in_features, out_features, scale):
            super().__init__()
            self.lin = nn.Linear(in_features, out_features)
            self.scale = scale

        def forward(self, x):
            return (torch.relu(self.lin(x)) * self.scale)


    def get_inputs():
        return [torch.randn(batch, in_features)]


    def get_init_inputs():
        # draws from the generator, so the model must be built under a fresh seed
        return [in_features, out_features, torch.rand(out_features) + 0.5]
''')

# A problem with two inputs and a tuple output, for structure tests.
TUPLE_PROBLEM = textwrap.dedent('''
    import torch
    import torch.nn as nn


    class Model(nn.Module):
        def forward(self, a, b):
            return a + b, (a * b).sum()


    def get_inputs():
        return [torch.randn(3, 5), torch.randn(3, 5)]


    def get_init_inputs():
        return []
''')

# A problem whose Model returns a persistent buffer it overwrites on every call and mutates its
# input in place: the reference must keep clones of both.
BUFFER_PROBLEM = textwrap.dedent('''
    import torch
    import torch.nn as nn


    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.out = None

        def forward(self, x):
            if self.out is None:
                self.out = torch.empty_like(x)
            torch.mul(x, 2, out=self.out)
            x.add_(1)
            return self.out


    def get_inputs():
        return [torch.randn(3, 4)]


    def get_init_inputs():
        return []
''')

CANDIDATE_HEADER = textwrap.dedent('''
    import torch
    import torch.nn as nn


    class ModelNew(nn.Module):
        def __init__(self, in_features, out_features, scale):
            super().__init__()
            self.lin = nn.Linear(in_features, out_features)
            self.scale = scale

        def forward(self, x):
''')


def candidate(body: str, prelude: str = "", epilogue: str = "") -> str:
    """A Linear+ReLU candidate whose forward runs body (indented by this function)."""
    return (textwrap.dedent(prelude) + CANDIDATE_HEADER
            + textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 8) + "\n"
            + textwrap.dedent(epilogue))


CORRECT = candidate("return (torch.relu(self.lin(x)) * self.scale)")
OFF_BY_1E2 = candidate("return (torch.relu(self.lin(x)) * self.scale) + 1e-2")
OFF_BY_5E3 = candidate("return (torch.relu(self.lin(x)) * self.scale) + 5e-3")
WRONG_SHAPE = candidate("return (torch.relu(self.lin(x)) * self.scale)[:, :4]")
WRONG_DTYPE = candidate("return (torch.relu(self.lin(x)) * self.scale).double()")
TUPLE_OUTPUT = candidate("y = (torch.relu(self.lin(x)) * self.scale)\nreturn (y, y)")
NAN_OUTPUT = candidate("y = (torch.relu(self.lin(x)) * self.scale)\ny[0, 0] = float('nan')\nreturn y")
RAISES = candidate("raise ValueError('candidate forward failed on purpose')")
EXITS = candidate("import sys\nsys.exit(7)")
INTERRUPTS = candidate("raise KeyboardInterrupt()")
NOT_A_TENSOR = candidate("return {'y': (torch.relu(self.lin(x)) * self.scale)}")
RETURNS_STRING = candidate("return 'a string'")
SYNTAX_ERROR = CORRECT + "\ndef broken(:\n    pass\n"
# Mutates its input in place after computing: the reference used its own copies.
MUTATES_INPUTS = candidate("y = (torch.relu(self.lin(x)) * self.scale)\nx.mul_(0).add_(1000.0)\nreturn y")
PRINTS = candidate(
    "print('candidate forward prints to stdout', flush=True)\n"
    "import os, sys\n"
    "os.write(1, b'\\x10\\x00\\x00\\x00{\"type\":\"bogus\"}')\n"
    "sys.stderr.write('and to stderr\\n')\n"
    "return (torch.relu(self.lin(x)) * self.scale)",
    prelude="print('candidate module prints at import', flush=True)\n")
FAILS_IN_INIT = CORRECT.replace("super().__init__()", "super().__init__()\n        raise RuntimeError('init fails')")
EXIT_AT_LOAD = "import sys\nsys.exit(3)\n"
NO_MODELNEW = "import torch\n\nclass Other:\n    pass\n"
BUILD_FAILS = "raise RuntimeError(\"Error building extension 'fake_ext': nvcc failed\")\n"
BUILD_SUBPROCESS_FAILS = "import subprocess\nraise subprocess.CalledProcessError(1, ['ninja', '-v'])\n"
# Right while counting calls up to 3 (the correctness trials), wrong afterwards (once timing starts).
CHANGES_WHEN_TIMED = candidate(
    "self.calls = getattr(self, 'calls', 0) + 1\n"
    "y = (torch.relu(self.lin(x)) * self.scale)\n"
    "return y if self.calls <= 3 else y * 0")
# Flips global numeric settings at the end of its forward: the default dtype float64 would make
# the next call's output float64 unless the harness re-applies its settings before every call.
FLIPS_NUMERICS = candidate(
    "out = (torch.relu(self.lin(x)) * self.scale) + torch.zeros(x.shape[0], 8)\n"
    "torch.set_default_dtype(torch.float64)\n"
    "torch.backends.cuda.matmul.allow_tf32 = True\n"
    "torch.set_float32_matmul_precision('medium')\n"
    "return out")


# Caches its answer keyed on the input's pointer, shape, strides and a sample of its contents, and
# counts its hits: on fresh inputs for every call the cache never hits, so it computes honestly.
CONTENT_KEYED_CACHE = candidate(
    "key = (x.data_ptr(), tuple(x.shape), x.stride(), float(x.reshape(-1)[0]), float(x.reshape(-1)[-1]))\n"
    "cache = self.__dict__.setdefault('answers', {})\n"
    "self.hits = getattr(self, 'hits', 0) + (key in cache)\n"
    "if key not in cache:\n"
    "    cache[key] = (torch.relu(self.lin(x)) * self.scale)\n"
    "print('cache hits', self.hits, flush=True)\n"
    "return cache[key]")
# Caches its answer on "the same input object again" (holding the object): never hits on new objects.
OBJECT_KEYED_CACHE = candidate(
    "if getattr(self, 'last_input', None) is x:\n"
    "    self.hits = getattr(self, 'hits', 0) + 1\n"
    "    return self.last_answer\n"
    "self.last_input, self.last_answer = x, (torch.relu(self.lin(x)) * self.scale)\n"
    "return self.last_answer")
# Answers from a cache keyed on the input's pointer and shape alone, once it has seen a few calls
# (so the correctness trials pass): stale answers, caught when a checked timed call compares.
POINTER_KEYED_CACHE = candidate(
    "self.calls = getattr(self, 'calls', 0) + 1\n"
    "cache = self.__dict__.setdefault('answers', {})\n"
    "key = tuple(x.shape)\n"
    "if self.calls > 4 and key in cache:\n"
    "    return cache[key]\n"
    "cache[key] = (torch.relu(self.lin(x)) * self.scale)\n"
    "return cache[key]")
# Reads ahead: every call, it loads whatever inputs files lie in its job folder (and the folder
# above, where these tests' reference writes) and caches its answers keyed on their contents, to
# return for a later call whose inputs match: answers computed outside that call's time. A batch's
# files are masked, so nothing it reads ever matches; it computes honestly and counts its hits.
READ_AHEAD_CACHE = candidate(
    "import glob, os\n"
    "self.calls = getattr(self, 'calls', 0) + 1\n"
    "cache = self.__dict__.setdefault('ahead', {})\n"
    "here = os.path.dirname(os.path.abspath(__file__))\n"
    "for path in glob.glob(os.path.join(here, 'inputs-*.pt')) + glob.glob(os.path.join(os.path.dirname(here), 'inputs-*.pt')):\n"
    "    try:\n"
    "        ahead = torch.frombuffer(bytearray(open(path, 'rb').read()), dtype=x.dtype).reshape(x.shape)\n"
    "    except Exception:\n"
    "        continue\n"
    "    cache.setdefault(ahead.numpy().tobytes(), (self.calls, torch.relu(self.lin(ahead)) * self.scale))\n"
    "self.read = max(getattr(self, 'read', 0), len(cache))\n"
    "made, answer = cache.get(x.numpy().tobytes(), (self.calls, None))\n"
    "if made < self.calls:  # an answer made in an earlier call, from files read ahead\n"
    "    self.hits = getattr(self, 'hits', 0) + 1\n"
    "    return answer\n"
    "return torch.relu(self.lin(x)) * self.scale")
# Returns a torch.Tensor subclass (whose work could be deferred until its values are read).
TENSOR_SUBCLASS = candidate(
    "return (torch.relu(self.lin(x)) * self.scale).as_subclass(DeferredResult)",
    prelude="""
        import torch

        class DeferredResult(torch.Tensor):
            pass
    """)

# ReLU of inputs drawn from torch.rand: its output equals its input.
RELU_OF_RAND_PROBLEM = textwrap.dedent('''
    import torch
    import torch.nn as nn


    class Model(nn.Module):
        def forward(self, x):
            return torch.relu(x)


    def get_inputs():
        return [torch.rand(8, 32)]


    def get_init_inputs():
        return []
''')
RETURNS_INPUT = textwrap.dedent('''
    import torch.nn as nn


    class ModelNew(nn.Module):
        def forward(self, x):
            return x
''')
# Outputs that do not depend on the inputs: zeros.
ZERO_PROBLEM = textwrap.dedent('''
    import torch
    import torch.nn as nn


    class Model(nn.Module):
        def forward(self, x):
            return torch.clamp(x, min=2.0, max=1.0) * 0


    def get_inputs():
        return [torch.randn(8, 32)]


    def get_init_inputs():
        return []
''')
# A softmax of uniform inputs over so many elements that every output is below the float32 tolerance.
TINY_SOFTMAX_PROBLEM = textwrap.dedent('''
    import torch
    import torch.nn as nn


    class Model(nn.Module):
        def forward(self, x):
            return torch.softmax(x, dim=1)


    def get_inputs():
        return [torch.rand(2, 65536)]


    def get_init_inputs():
        return []
''')


def mean_problem(elements: int) -> str:
    """A problem whose output is the mean of `elements` uniform draws plus 10 (a 0-d tensor)."""
    return textwrap.dedent(f'''
        import torch
        import torch.nn as nn


        class Model(nn.Module):
            def forward(self, x):
                return (x + 10.0).mean()


        def get_inputs():
            return [torch.rand({elements})]


        def get_init_inputs():
            return []
    ''')


def pickle_payload_candidate(marker_path: str) -> str:
    """A candidate that replaces the harness's export of its outputs: it hands over a torch.save
    file holding a pickle payload which, if ever unpickled, would create marker_path."""
    return candidate("return (torch.relu(self.lin(x)) * self.scale)", prelude=f'''
        import builtins
        import os
        import torch
        import dicebench_harness.transfer as harness_transfer

        class Payload:
            def __reduce__(self):
                return (builtins.open, ({marker_path!r}, "w"))

        def _evil_export(value, device, path):
            torch.save([Payload()], path)
            size = os.path.getsize(path)
            return {{"transport": "raw_file", "path": path, "tree": {{"list": [{{"tensor": {{
                "dtype": "uint8", "shape": [size], "offset_bytes": 0, "size_bytes": size}}}}]}}}}, None

        harness_transfer.export_tree = _evil_export
    ''')
