"""Runs one test candidate in this process and saves its outputs (for test_fastpath_gpu.py).

usage: run_candidate.py CANDIDATE.py stock|fast OUTPUT.pt CACHE_DIR

stock: torch's own load_inline; fast: dicebench_fastpath installed first. Both build ModelNew from
get_init_inputs() and run it on get_inputs() under the same seeds, twice, and save the outputs
(on the CPU), the seconds the candidate's source took to execute (its compiles), and the fast
path's compile records.
"""

from __future__ import annotations

import sys
import time

import torch

from fastpath_test_support import exec_candidate


def to_cpu(outputs):
    if isinstance(outputs, torch.Tensor):
        return outputs.detach().cpu()
    if isinstance(outputs, (list, tuple)):
        return type(outputs)(to_cpu(o) for o in outputs)
    return outputs


def main() -> int:
    path, mode, output, cache_dir = sys.argv[1:5]
    records = []
    if mode == "fast":
        import dicebench_fastpath

        dicebench_fastpath.install(dicebench_fastpath.detect_arch(), cache_dir, lambda line: print(line, flush=True))
    started = time.perf_counter()
    module = exec_candidate(path)
    compile_seconds = time.perf_counter() - started
    if mode == "fast":
        records = dicebench_fastpath.compile_records()
    torch.manual_seed(1234)
    model = module.ModelNew(*module.get_init_inputs()).cuda().eval()
    runs = []
    for _ in range(2):
        torch.manual_seed(42)
        inputs = module.get_inputs()
        with torch.no_grad():
            outputs = model(*inputs)
        torch.cuda.synchronize()
        runs.append(to_cpu(outputs))
    torch.save({"runs": runs, "compile_seconds": compile_seconds, "records": records}, output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
