// The evaluation settings: [eval] keys checked and resolved, slots, the worker's executables.
#include "core/host/evaluation_settings.hpp"

#include "core/base/number_text.hpp"

#include "core/base/one_line.hpp"
#include "core/base/text.hpp"
#include "core/host/repro.hpp"
#include "harness/client/sandbox_launch.hpp"
#include "harness/sandbox/protections.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <random>
#include <thread>
#include <type_traits>

namespace dicebench::host {
namespace {

// The tolerance modes' names before they said what the modes do: KernelBench's rule per dtype, and
// the DICE paper's 1e-2 for every dtype.
constexpr std::pair<std::string_view, ToleranceMode> kOldToleranceNames[] = {{"kernelbench", ToleranceMode::per_dtype},
                                                                             {"compat", ToleranceMode::uniform}};

template <class T>
Result<T> number_setting(const Config& config, const std::string& key, T fallback, T minimum,
                         T maximum = std::numeric_limits<T>::max()) {
  const auto text = config.get(key);
  if (!text) return fallback;
  if (const auto value = parse_number<T>(*text, minimum, maximum)) return *value;
  return make_error(
      ErrorKind::bad_input,
      maximum == std::numeric_limits<T>::max()
          ? fmt::format("setting '{}' must be a number of at least {}, not '{}'", key, minimum, *text)
          : fmt::format("setting '{}' must be a number from {} to {}, not '{}'", key, minimum, maximum, *text));
}

// The longest time limit a setting may give (a week): more overflows the clocks' milliseconds.
constexpr double kMaxSeconds = 7 * 24 * 3600;
// More workers at once than cores would share them, and distort every timing.
int cores() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

// eval.sandbox = best | require | off, eval.keep_jobs, and the sandbox's limits.
Result<void> sandbox_settings(const Config& config, harness::EvaluationSettings& s) {
  s.sandbox.mode = config.get("eval.sandbox").value_or("best");
  if (std::find(sandbox::kModes.begin(), sandbox::kModes.end(), s.sandbox.mode) == sandbox::kModes.end())
    return make_error(ErrorKind::bad_input,
                      fmt::format("eval.sandbox must be best, require or off, not '{}'", s.sandbox.mode));
  s.sandbox.executable = beside_worker(s.worker_executable, "dicebench-sandbox", "DICEBENCH_SANDBOX");
  const std::string keep = config.get("eval.keep_jobs").value_or("false");
  if (keep != "true" && keep != "false")
    return make_error(ErrorKind::bad_input, fmt::format("eval.keep_jobs must be true or false, not '{}'", keep));
  s.keep_jobs = keep == "true";
  const std::pair<const char*, uint64_t*> sizes[] = {{"eval.memory_max", &s.sandbox.memory_max_bytes},
                                                     {"eval.file_size_max", &s.sandbox.file_size_max_bytes}};
  s.sandbox.memory_max_bytes = harness::half_of_physical_memory();
  for (const auto& [key, target] : sizes) {
    const auto text = config.get(key);
    if (!text) continue;
    const auto bytes = std::string(key) == "eval.memory_max" ? harness::parse_memory_size(*text) : parse_size(*text);
    if (!bytes || *bytes == 0)
      return make_error(
          ErrorKind::bad_input,
          fmt::format("setting '{}' must be a size such as 16GiB or 512MiB{}, not '{}'", key,
                      std::string(key) == "eval.memory_max" ? " (or auto: half of this machine's memory)" : "", *text));
    *target = *bytes;
  }
  auto pids = number_setting<uint64_t>(config, "eval.pids_max", s.sandbox.pids_max, 16);
  if (!pids) return pids.error();
  s.sandbox.pids_max = *pids;
  auto files = number_setting<uint64_t>(config, "eval.open_files_max", s.sandbox.open_files_max, 64);
  if (!files) return files.error();
  s.sandbox.open_files_max = *files;
  return {};
}

}  // namespace

Result<harness::EvaluationSettings> evaluation_settings(const Config& config) {
  harness::EvaluationSettings s;
  s.worker_executable = worker_executable();
  // The fast path's trusted compile step (without it every load_inline call fell back to torch's
  // toolchain: "dicebench-sandbox: cannot run : No such file or directory", on the H200).
  s.compile_executable = beside_worker(s.worker_executable, "dicebench-compile", "DICEBENCH_COMPILE");
  // Default: CUDA where a GPU is visible (nvidia-smi, without touching CUDA here), else the CPU.
  s.device = config.get("eval.device").value_or(std::system("nvidia-smi -L > /dev/null 2>&1") == 0 ? "cuda" : "cpu");
  if (s.device != "cpu" && s.device != "cuda")
    return make_error(ErrorKind::bad_input, fmt::format("eval.device must be cpu or cuda, not '{}'", s.device));
  if (const auto tolerance = config.get("eval.tolerance")) {
    const auto mode = tolerance_mode(*tolerance);
    if (!mode)
      return make_error(ErrorKind::bad_input,
                        fmt::format("eval.tolerance must be {}, not '{}'", tolerance_modes_text(), *tolerance));
    s.tolerance = *mode;
  }
  if (const auto model_mode = config.get("eval.model_mode")) {
    const auto mode = parse_model_mode(*model_mode);
    if (!mode)
      return make_error(ErrorKind::bad_input, fmt::format("eval.model_mode must be {} (KernelBench's) or {}, not '{}'",
                                                          model_mode_name(kAllModelModes[0]),
                                                          model_mode_name(kAllModelModes[1]), *model_mode));
    s.model_mode = *mode;
  }
  auto trials = number_setting<int>(config, "eval.trials", 5, 1);
  if (!trials) return trials.error();
  s.trials = *trials;
  auto timeout = number_setting<double>(config, "eval.timeout_s", 300.0, 1.0, kMaxSeconds);
  if (!timeout) return timeout.error();
  s.candidate_timeout = std::chrono::milliseconds(static_cast<long long>(*timeout * 1000));
  auto compile_timeout = number_setting<double>(config, "eval.compile_timeout_s", 600.0, 1.0, kMaxSeconds);
  if (!compile_timeout) return compile_timeout.error();
  s.compile_timeout = std::chrono::milliseconds(static_cast<long long>(*compile_timeout * 1000));
  // Each request to the reference gets the longer of the candidate's two limits: a problem that
  // never returns holds a caller no longer than a candidate would (it was a fixed 10 minutes).
  s.reference_timeout = std::max(s.candidate_timeout, s.compile_timeout);
  const std::string fastpath = config.get("eval.fastpath").value_or("on");
  if (fastpath != "on" && fastpath != "off")
    return make_error(ErrorKind::bad_input, fmt::format("eval.fastpath must be on or off, not '{}'", fastpath));
  s.fastpath = fastpath == "on";
  s.fastpath_cache = config.get("eval.fastpath_cache").value_or("");
  auto toolchain_jobs = number_setting<int>(config, "eval.toolchain_jobs", 0, 0, cores());
  if (!toolchain_jobs) return toolchain_jobs.error();
  s.toolchain_jobs = *toolchain_jobs;
  const std::string pch = config.get("eval.toolchain_pch").value_or("on");
  if (pch != "on" && pch != "off")
    return make_error(ErrorKind::bad_input, fmt::format("eval.toolchain_pch must be on or off, not '{}'", pch));
  s.toolchain_precompiled_headers = pch == "on";
  auto toolchain_timeout = number_setting<double>(config, "eval.toolchain_timeout_s", 600.0, 1.0, kMaxSeconds);
  if (!toolchain_timeout) return toolchain_timeout.error();
  s.toolchain_timeout = std::chrono::milliseconds(static_cast<long long>(*toolchain_timeout * 1000));
  s.toolchain_cache = config.get("eval.toolchain_cache").value_or("");
  auto prefetch = number_setting<int>(config, "eval.prefetch", 4, 0, 1024);
  if (!prefetch) return prefetch.error();
  s.prefetch = *prefetch;
  if (const auto baseline = config.get("eval.baseline")) {
    const auto method = parse_baseline_method(*baseline);
    if (!method)
      return make_error(ErrorKind::bad_input, fmt::format("eval.baseline must be {} or {} (torch.compile), not '{}'",
                                                          baseline_method_name(kAllBaselineMethods[0]),
                                                          baseline_method_name(kAllBaselineMethods[1]), *baseline));
    s.baseline_method = *method;
  }
  auto budget = number_setting<double>(config, "eval.timing_budget_s", 10.0, 0.001, kMaxSeconds);
  if (!budget) return budget.error();
  s.budget_seconds = *budget;
  // The relative half-width of the median's 95% interval at which timing stops (dicebench_timing.py
  // argues the default).
  const auto spread_text = config.get("eval.timing_spread");
  if (spread_text) {
    const auto spread = parse_number<double>(*spread_text, 0.0, 1.0);
    if (!spread || *spread == 0 || *spread == 1)
      return make_error(ErrorKind::bad_input,
                        fmt::format("setting 'eval.timing_spread' must be a fraction above 0 and below 1 (0.02: "
                                    "within 2% of the median), not '{}'",
                                    *spread_text));
    s.target_rel_ci = *spread;
  }
  const std::string timing = config.get("eval.timing").value_or("on");
  if (timing != "on" && timing != "off")
    return make_error(ErrorKind::bad_input, fmt::format("eval.timing must be on or off, not '{}'", timing));
  s.timing = timing == "on";
  const std::string warm = config.get("eval.warm_calls").value_or("on");
  if (warm != "on" && warm != "off")
    return make_error(ErrorKind::bad_input, fmt::format("eval.warm_calls must be on or off, not '{}'", warm));
  s.warm_calls = warm == "on";
  if (const auto batch = config.get("eval.timing_batch")) {
    const auto bytes = parse_size(*batch);
    if (!bytes || *bytes == 0 || *bytes > (uint64_t{1} << 50))
      return make_error(
          ErrorKind::bad_input,
          fmt::format("setting 'eval.timing_batch' must be a size such as 4GiB or 512MiB, not '{}'", *batch));
    s.batch_bytes = static_cast<int64_t>(*bytes);
  }
  auto bound = number_setting<double>(config, "eval.speedup_bound", 10.0, 0.0);
  if (!bound) return bound.error();
  s.speedup_bound = *bound;
  auto gbps = number_setting<double>(config, "eval.bandwidth_gbps", 0.0, 0.0);
  if (!gbps) return gbps.error();
  s.bandwidth = *gbps * 1e9;
  const std::string confirm = config.get("eval.confirm_fastpath").value_or("on");
  if (confirm != "on" && confirm != "off")
    return make_error(ErrorKind::bad_input, fmt::format("eval.confirm_fastpath must be on or off, not '{}'", confirm));
  s.confirm_fastpath_failures = confirm == "on";
  DICEBENCH_TRY(sandbox_settings(config, s));
  // Secret per process: never stored, so nothing a candidate can read reveals the input seeds.
  std::random_device random;
  s.secret = (static_cast<uint64_t>(random()) << 32) ^ random();
  return s;
}

std::optional<ToleranceMode> tolerance_mode(std::string_view name) {
  if (const auto mode = parse_tolerance_mode(name)) return mode;
  for (const auto& [old_name, mode] : kOldToleranceNames)
    if (name == old_name) return mode;
  return std::nullopt;
}

std::string tolerance_modes_text() {
  std::vector<std::string> modes, old_names;
  for (const auto mode : kAllToleranceModes) modes.emplace_back(tolerance_mode_name(mode));
  for (const auto& [old_name, mode] : kOldToleranceNames)
    old_names.push_back(fmt::format("{} for {}", old_name, tolerance_mode_name(mode)));
  return fmt::format("{} (or the old names: {})", join(modes, " or "), join(old_names, ", "));
}

std::string beside_worker(const std::string& worker, const char* name, const char* variable) {
  if (const char* env = std::getenv(variable)) return env;
  return (std::filesystem::path(worker).parent_path() / name).string();
}

std::string worker_executable() {
  if (const char* env = std::getenv("DICEBENCH_WORKER")) return env;
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return (self.parent_path() / "dicebench-worker").string();
}

Result<std::optional<RaySettings>> ray_settings(const Config& config) {
  const auto address = config.get("eval.ray");
  if (!address) {
    for (const char* key : {"eval.ray_actors", "eval.ray_resource"})
      if (config.get(key))
        return make_error(ErrorKind::bad_input, fmt::format("setting '{}' needs eval.ray (--ray ADDRESS)", key));
    return std::optional<RaySettings>();
  }
  if (address->empty() || address->find_first_of(" \t\n") != std::string::npos)
    return make_error(ErrorKind::bad_input, fmt::format("eval.ray must be a Ray cluster's address (auto, HOST:PORT or "
                                                        "ray://HOST:PORT), not '{}'",
                                                        on_one_line(*address)));
  RaySettings ray{*address};
  auto actors = number_setting<int>(config, "eval.ray_actors", 0, 0, 100000);
  if (!actors) return actors.error();
  ray.actors = *actors;
  ray.resource = config.get("eval.ray_resource").value_or("auto");
  if (ray.resource.empty() || ray.resource.find_first_of(" \t\n\"'") != std::string::npos)
    return make_error(
        ErrorKind::bad_input,
        fmt::format("eval.ray_resource must be auto, none or a resource's name, not '{}'", on_one_line(ray.resource)));
  return std::optional<RaySettings>(std::move(ray));
}

Result<std::vector<std::optional<std::string>>> evaluation_slots(const Config& config, const std::string& device,
                                                                 bool timing) {
  std::vector<std::optional<std::string>> slots;
  // Checked on the CPU too, where it has no use, so that a bad value is never quietly dropped.
  int per_gpu = timing ? 1 : kUntimedGpuSlots;
  if (const auto text = config.get("eval.gpu_slots"); text && *text != "auto") {
    auto number = number_setting<int>(config, "eval.gpu_slots", 1, 1, kMaxGpuSlots);
    if (!number)
      return make_error(ErrorKind::bad_input, fmt::format("setting 'eval.gpu_slots' must be auto or a number from 1 to "
                                                          "{} (evaluators sharing each GPU), not '{}'",
                                                          kMaxGpuSlots, on_one_line(*text)));
    per_gpu = *number;
  }
  if (device == "cpu") {
    // GPUs asked for are not quietly dropped (a run on a machine without the GPU it names).
    if (const auto gpus = config.get("eval.gpus"); gpus && *gpus != "all")
      return make_error(
          ErrorKind::bad_input,
          fmt::format("eval.gpus names GPUs ('{}'), but this evaluation runs on the CPU (eval.device is cpu, "
                      "or no GPU is visible): drop --gpus, or evaluate where those GPUs are",
                      on_one_line(*gpus)));
    auto workers = number_setting<int>(config, "eval.cpu_workers", 1, 1, cores());
    if (!workers) return workers.error();
    slots.assign(static_cast<size_t>(*workers), std::nullopt);
    return slots;
  }
  const std::vector<std::string> visible = visible_gpus();
  const std::string wanted = config.get("eval.gpus").value_or("all");
  const auto with_slots = [per_gpu](const std::vector<std::optional<std::string>>& gpus) {
    std::vector<std::optional<std::string>> all;
    for (int round = 0; round < per_gpu; ++round) all.insert(all.end(), gpus.begin(), gpus.end());
    return all;
  };
  if (wanted == "all") {
    if (visible.empty())
      return make_error(ErrorKind::bad_input, "no GPU is visible (nvidia-smi lists none); evaluate with --device cpu");
    for (const auto& gpu : visible) slots.emplace_back(gpu);
    return with_slots(slots);
  }
  for (const auto& entry : split(wanted, ',')) {
    const std::string gpu(trim(entry));
    if (std::find(visible.begin(), visible.end(), gpu) == visible.end())
      return make_error(ErrorKind::bad_input, fmt::format("eval.gpus names GPU '{}', but the visible GPUs are: {}", gpu,
                                                          visible.empty() ? "none" : join(visible, ",")));
    if (std::find(slots.begin(), slots.end(), std::optional<std::string>(gpu)) != slots.end())
      return make_error(ErrorKind::bad_input, fmt::format("eval.gpus names GPU '{}' twice", gpu));
    slots.emplace_back(gpu);
  }
  if (slots.empty()) return make_error(ErrorKind::bad_input, "eval.gpus names no GPU");
  return with_slots(slots);
}

}  // namespace dicebench::host
