#!/usr/bin/env bash
# One call on an offline GPU host (no network; the dependency bundle carried beside the checkout):
# builds against the bundle, then runs the GPU checks, writing logs and JSON under $OUT.
#   OUT=DIR DEPS=BUNDLE tools/perf/gpu_host.sh tests       the sandbox's refused-call and containment
#                                                         tests, the gpu-labelled tests, then the sandbox
#                                                         probe, gpu_memory_residue.py, syscall_filter_cost.py
#   OUT=DIR DEPS=BUNDLE tools/perf/gpu_host.sh rl TASKS REWARD [rl_step_benchmark options]
#                                                         the RL step (tasks from --select-only, DICE's
#                                                         reward folder)
# Environment for `tests`: CTEST_LIMIT (seconds, default 300), CTEST_J (default 4), CTEST_ARGS (e.g.
# "-E engine_fidelity"), SANDBOX_TESTS=0 to skip the refused-call tests, PROBES=0 to skip the probes,
# FILTER_COST=0 to skip syscall_filter_cost.py.
# For `rl`: BUDGET (seconds, default 560).
# The bundle comes from tools/gather-offline-deps.sh; the build is incremental, so a second call on a
# warm machine starts at once.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${OUT:?set OUT to the folder for logs and JSON}
deps=${DEPS:?set DEPS to the dependency bundle (tools/gather-offline-deps.sh)}
usage() { echo "gpu_host: $1 (usage: OUT=DIR DEPS=BUNDLE tools/perf/gpu_host.sh tests | rl TASKS REWARD [options])" >&2; exit 2; }
mode=${1:-}
case $mode in
  tests) ;;
  rl) [ $# -ge 3 ] || usage "rl takes the tasks file and the reward folder"
      tasks=$2; reward=$3; shift 3
      if [ ! -f "$tasks" ] || [ ! -d "$reward" ]; then usage "no tasks file $tasks or reward folder $reward"; fi ;;
  *) usage "the first argument is tests or rl" ;;
esac
[ -d "$deps" ] || usage "no dependency bundle at $deps"
cd "$root" || exit 1
started=$(date +%s)
elapsed() { echo $(( $(date +%s) - started )); }

(nvidia-smi; uname -r) > "$out/gpu.txt" 2>&1
if ! DICEBENCH_DEPS_DIR=$(cd "$deps" && pwd) tools/bootstrap.sh > "$out/build.log" 2>&1; then
  echo "gpu_host: the build failed (last lines of $out/build.log):"; tail -40 "$out/build.log"; exit 1
fi
echo "gpu_host: built at $(elapsed) s"
export PYTHONPATH=$root/build/lib/dicebench/python PYTHONUNBUFFERED=1

case $mode in
  tests)
    # The sandbox's refused-call and containment tests (labelled integration) on this host's kernel
    # first, then the gpu-labelled tests.
    if [ "${SANDBOX_TESTS:-1}" != 0 ]; then
      timeout 120 ctest --test-dir build -R "test_syscall_filter:|test_containment:" -j "${CTEST_J:-4}" \
        --output-on-failure > "$out/ctest_sandbox.log" 2>&1
      echo "gpu_host: sandbox tests exit $? at $(elapsed) s"
      grep -E "tests passed|\*\*\*" "$out/ctest_sandbox.log"
    fi
    # shellcheck disable=SC2086
    timeout "${CTEST_LIMIT:-300}" ctest --test-dir build -L gpu ${CTEST_ARGS:-} -j "${CTEST_J:-4}" \
      --output-on-failure --timeout 240 > "$out/ctest_gpu.log" 2>&1
    echo "gpu_host: gpu tests exit $? at $(elapsed) s"
    grep -E "tests passed|\*\*\*|Not Run" "$out/ctest_gpu.log"
    [ "${PROBES:-1}" = 0 ] && exit 0
    {
      timeout 20 build/bin/dicebench-sandbox --probe --memory-max 17179869184 --pids-max 1024
      timeout 150 python3 tools/perf/gpu_memory_residue.py --build build --mib 1024 --json "$out/gpu_memory_residue.json"
      [ "${FILTER_COST:-1}" = 0 ] || timeout 150 python3 tools/perf/syscall_filter_cost.py --python python3 --device cuda --launches 8 \
        --bare-launches 20 --call-rounds 5 --calls 1000000 --json "$out/syscall_filter_cost.json"
    } > "$out/probes.log" 2>&1
    echo "gpu_host: probes done at $(elapsed) s"; cat "$out/probes.log" ;;
  rl)
    python3 tools/perf/rl_step_benchmark.py --tasks-file "$tasks" --dice-reward "$reward" --device cuda \
      --budget $(( ${BUDGET:-560} - $(elapsed) )) --work /tmp/rlwork --json "$out/rl_step.json" "$@" \
      2>&1 | tee "$out/rl_step.log" | grep -v '^\[' ;;
esac
