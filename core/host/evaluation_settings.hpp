// The evaluation settings of a run, `dicebench eval` and the Python module: resolved from the
// config (section [eval] or flags), where evaluations run (slots), and the worker's executables.
#pragma once

#include "core/base/result.hpp"
#include "core/host/config.hpp"
#include "harness/client/evaluator.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dicebench::host {

// Settings (section [eval] or flags): device = cpu|cuda (default: cuda where a GPU is visible),
// trials, tolerance = per_dtype|uniform (core/spec/vocabulary.toml, or an old name: tolerance_mode),
// model_mode = train (KernelBench's) | eval, compile_timeout_s (worker start-up and the candidate's
// compile), timeout_s (the candidate's init, trials and timing), timing_budget_s, timing_spread
// (timing stops once the median's 95% interval is within this fraction of it), warm_calls = on|off
// (an untimed call before each timed one), timing_batch (a size: inputs made ahead per batch of
// timed calls), fastpath = on|off
// (NVRTC compiles of load_inline calls on CUDA), fastpath_cache (its cache folder), baseline =
// eager|compile (the reference as is, or under torch.compile), cpu_workers, gpus; sandbox =
// best|require|off (the candidate sandbox: what this machine allows, all of it, or none),
// keep_jobs = true|false, memory_max (a size, or auto: half of the machine's memory), pids_max,
// file_size_max, open_files_max (the sandbox's limits per candidate); speedup_bound (flag
// excessive_speedup above it, default 10), bandwidth_gbps (the memory floor's bandwidth; default:
// measured on the GPU, none on the CPU), confirm_fastpath = on|off (re-judge fast-path failures with
// torch's toolchain).
Result<harness::EvaluationSettings> evaluation_settings(const Config& config);

// Every key of the [eval] section: those above, evaluation_slots()'s and nothing else (a test
// checks this list against the keys evaluation_settings.cpp reads).
inline constexpr std::string_view kEvalKeys[] = {"eval.bandwidth_gbps",
                                                 "eval.baseline",
                                                 "eval.compile_timeout_s",
                                                 "eval.confirm_fastpath",
                                                 "eval.cpu_workers",
                                                 "eval.device",
                                                 "eval.fastpath",
                                                 "eval.fastpath_cache",
                                                 "eval.file_size_max",
                                                 "eval.gpu_slots",
                                                 "eval.gpus",
                                                 "eval.keep_jobs",
                                                 "eval.memory_max",
                                                 "eval.model_mode",
                                                 "eval.open_files_max",
                                                 "eval.pids_max",
                                                 "eval.prefetch",
                                                 "eval.ray",
                                                 "eval.ray_actors",
                                                 "eval.ray_resource",
                                                 "eval.sandbox",
                                                 "eval.speedup_bound",
                                                 "eval.timeout_s",
                                                 "eval.timing",
                                                 "eval.timing_batch",
                                                 "eval.timing_budget_s",
                                                 "eval.timing_spread",
                                                 "eval.tolerance",
                                                 "eval.toolchain_cache",
                                                 "eval.toolchain_jobs",
                                                 "eval.toolchain_pch",
                                                 "eval.toolchain_timeout_s",
                                                 "eval.trials",
                                                 "eval.warm_calls"};

// A Ray cluster whose evaluator pool judges instead of this machine's slots (run --ray, serve --ray;
// core/run/ray_pool.hpp): eval.ray (its address: auto, HOST:PORT or ray://...), eval.ray_actors (0:
// one actor per unit of the resource on CUDA, per eval.cpu_workers CPUs on the CPU), eval.ray_resource
// (auto: dicebench_gpu on CUDA, none on the CPU; none; or a custom resource's name). nullopt without
// eval.ray.
struct RaySettings {
  std::string address;
  int actors = 0;
  std::string resource = "auto";
};
Result<std::optional<RaySettings>> ray_settings(const Config& config);

// The tolerance mode that `name` stands for: a mode's own name,
// or the name it had before the modes were named for what they do (kernelbench: per_dtype, compat:
// uniform), which runs stored in eval.tolerance and scripts pass to --tolerance; nullopt for
// anything else. evaluation_settings() reads eval.tolerance through it: the one place old names
// are translated, so the worker only ever sees the modes' own names.
std::optional<ToleranceMode> tolerance_mode(std::string_view name);
// What eval.tolerance accepts, for help and errors: "per_dtype or uniform (or the old names ...)".
std::string tolerance_modes_text();

// dicebench-worker: $DICEBENCH_WORKER, else beside this executable.
std::string worker_executable();
// A helper executable of the worker's (dicebench-sandbox, dicebench-compile): $variable, else
// `name` beside the worker.
std::string beside_worker(const std::string& worker, const char* name, const char* variable);

// Where evaluations run: for cuda eval.gpu_slots slots per GPU in eval.gpus ("all", the default,
// or a list such as "0,2" of visible GPUs), each pinned with CUDA_VISIBLE_DEVICES; for cpu
// eval.cpu_workers slots (default 1) without pinning. eval.gpu_slots is a number (1 to
// kMaxGpuSlots) or auto: kUntimedGpuSlots when `timing` is off (the reward's correctness-only
// checks, side by side as DICE runs them), else 1 (timed runs keep a GPU to one evaluator).
Result<std::vector<std::optional<std::string>>> evaluation_slots(const Config& config, const std::string& device,
                                                                 bool timing);
inline constexpr int kUntimedGpuSlots = 4;  // DICE's rl_execute_kernel.py: four subprocesses per GPU
inline constexpr int kMaxGpuSlots = 16;

}  // namespace dicebench::host
