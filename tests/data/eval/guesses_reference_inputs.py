# Hostile: with the problem's names in its namespace it reaches for what the reference's worker
# holds. It looks in its own process for a built reference (a Model instance besides itself, a module
# of the problem's besides its own) and for inputs it could remake: the problem's get_inputs under
# seeds it guesses (the init seed it was built under, read back from torch, that plus the call,
# small integers). It answers with the problem's Model on its guess, or garbage where none matched.
# The reference, its outputs and the inputs' seeds stay in the reference's worker: it finds nothing,
# and its answers are wrong. For problem_linear_relu.py.
import gc
import sys

import torch


def _is_reference(o, me):
    try:
        return isinstance(o, Model) and o is not me  # the problem's Model
    except Exception:
        return False


class ModelNew(Model):  # the problem's
    def __init__(self, features):
        super().__init__(features)
        self.init_seed = torch.initial_seed()  # the seed the harness built it under
        self.calls = 0

    def forward(self, x):
        others = [o for o in gc.get_objects() if _is_reference(o, self)]
        modules = [name for name, module in list(sys.modules.items())
                   if getattr(module, "__dict__", {}).get("get_init_inputs") is not None
                   and module.__dict__ is not globals()]
        print(f"reference objects found: {len(others)}; problem modules found: {len(modules)}", flush=True)
        guesses = [self.init_seed, self.init_seed + self.calls, *range(64)]
        self.calls += 1
        for seed in guesses:
            torch.manual_seed(seed)
            guess = get_inputs()[0]  # the problem's
            if torch.equal(guess, x):
                print(f"guessed the inputs' seed: {seed}", flush=True)
                return super().forward(guess)
        print("no guessed seed remakes the inputs", flush=True)
        return torch.full_like(super().forward(x), 7.0)
