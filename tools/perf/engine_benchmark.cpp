// dicebench-engine-benchmark: forward passes/s and tokens/s of the engine on a model folder, per
// decoding preset and batch size, with random prompts, and the GPU memory peak of each. Prints a
// table and writes JSON; --trace writes a Chrome trace (torch's profiler: host ops and kernels) of
// a short generation per preset.
//   dicebench-engine-benchmark --model-path DIR --device cuda --dtype bfloat16
//       --preset paper --preset fast --batch 1 --batch 16 --new-tokens 512 --json bench.json
#include <CLI/CLI.hpp>
#if DICEBENCH_BENCHMARK_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <torch/csrc/autograd/profiler_kineto.h>
#endif

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "models/engine/engine.hpp"

using namespace dicebench::engine;

namespace {

// Peak bytes held by torch's CUDA allocator since the last call (0 on the CPU).
int64_t take_memory_peak([[maybe_unused]] const std::string& device) {
#if DICEBENCH_BENCHMARK_CUDA
  if (device.rfind("cuda", 0) != 0) return 0;
  const auto index = static_cast<c10::DeviceIndex>(device.size() > 5 ? std::stoi(device.substr(5)) : 0);
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(index);
  const auto peak = stats.allocated_bytes[static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE)].peak;
  c10::cuda::CUDACachingAllocator::resetPeakStats(index);
  return peak;
#else
  return 0;
#endif
}

// Runs `work` under torch's profiler (host operators and CUDA kernels) and saves a Chrome trace.
template <class Work>
bool traced(const std::string& path, Work&& work) {
#if DICEBENCH_BENCHMARK_CUDA
  namespace profiler = torch::autograd::profiler;
  const profiler::ProfilerConfig config(torch::profiler::impl::ProfilerState::KINETO);
  const std::set<torch::profiler::impl::ActivityType> activities{torch::profiler::impl::ActivityType::CPU,
                                                                 torch::profiler::impl::ActivityType::CUDA};
  profiler::prepareProfiler(config, activities);
  profiler::enableProfiler(config, activities);
  work();
  try {
    profiler::disableProfiler()->save(path);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "dicebench-engine-benchmark: error: cannot write the trace %s: %s\n", path.c_str(),
                 error.what());
    std::exit(1);
  }
  return true;
#else
  (void)path;
  work();
  return false;
#endif
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Measures the model engine's generation speed on a model folder"};
  std::string model_path, device = "cpu", dtype_text, json_path, trace_prefix;
  bool no_cuda_graphs = false, no_fused_kernels = false;
  std::vector<std::string> presets{"paper"};
  std::vector<int64_t> batches{1};
  int64_t prompt_tokens = 128, new_tokens = 256;
  app.add_option("--model-path", model_path, "Hugging Face model folder")->required();
  app.add_option("--device", device, "cpu, cuda, cuda:N");
  app.add_option("--dtype", dtype_text, "float32, float16 or bfloat16 (default: the engine's for the device)");
  app.add_option("--preset", presets, "decoding presets: paper, fast, greedy");
  app.add_option("--batch", batches, "batch sizes");
  app.add_option("--prompt-tokens", prompt_tokens, "tokens per random prompt");
  app.add_option("--new-tokens", new_tokens, "new tokens per prompt");
  app.add_option("--json", json_path, "write the results here");
  app.add_flag("--no-cuda-graphs", no_cuda_graphs, "launch every kernel of a decoding pass one by one");
  app.add_flag("--no-fused-kernels", no_fused_kernels,
               "ATen's kernels for norms, RoPE and SwiGLU instead of the fused ones");
  app.add_option("--trace", trace_prefix,
                 "write PREFIX-<preset>.json: a profiler trace of 8 new tokens at the first batch size");
  CLI11_PARSE(app, argc, argv);

  EngineOptions options{device, {}, !no_cuda_graphs, !no_fused_kernels};
  if (!dtype_text.empty()) {
    options.dtype = parse_dtype(dtype_text);
    if (!options.dtype) {
      std::fprintf(stderr, "dicebench-engine-benchmark: error: unknown dtype '%s'\n", dtype_text.c_str());
      return 2;
    }
  }
  const auto started = std::chrono::steady_clock::now();
  auto engine = Engine::load(model_path, options);
  if (!engine) {
    std::fprintf(stderr, "dicebench-engine-benchmark: error: %s\n", engine.error().message.c_str());
    return 1;
  }
  const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  auto& model = **engine;
  std::printf("%s on %s (%s, CUDA graphs %s, fused kernels %s), loaded in %.1f s\n", model_path.c_str(),
              model.device().c_str(), dtype_name(model.dtype()), no_cuda_graphs ? "off" : "on",
              model.fused_kernels() ? "on" : "off", load_s);
  std::printf("%-8s %6s %10s %10s %12s %12s %10s %10s\n", "preset", "batch", "passes", "seconds", "passes/s",
              "tokens/s", "tok/pass", "peak GiB");

  nlohmann::json results = nlohmann::json::array();
  std::mt19937_64 random(1234);
  const int64_t vocab = model.config().vocab_size;
  for (const auto& name : presets) {
    auto preset = decode_preset(name, model.config(), model.generation_config());
    if (!preset) {
      std::fprintf(stderr, "dicebench-engine-benchmark: error: %s\n", preset.error().message.c_str());
      return 2;
    }
    for (const auto batch : batches) {
      TokenRows prompts(static_cast<size_t>(batch));
      for (auto& prompt : prompts)
        for (int64_t i = 0; i < prompt_tokens; ++i)  // ordinary ids, away from special tokens at the top
          prompt.push_back(
              static_cast<int64_t>(random() % static_cast<uint64_t>(std::min<int64_t>(vocab - 300, 150000))));
      auto settings = preset->settings;
      settings.max_new_tokens = std::min<int64_t>(8, new_tokens);  // warm-up: allocations, kernels chosen
      if (auto warm = model.generate(prompts, settings); !warm) {
        std::fprintf(stderr, "dicebench-engine-benchmark: error: %s\n", warm.error().message.c_str());
        return 1;
      }
      if (!trace_prefix.empty() && batch == batches.front()) {
        const auto path = trace_prefix + "-" + name + ".json";
        if (traced(path, [&] { (void)model.generate(prompts, settings); }))
          std::printf("(trace of %lld new tokens at batch %lld: %s)\n", static_cast<long long>(settings.max_new_tokens),
                      static_cast<long long>(batch), path.c_str());
      }
      settings.max_new_tokens = new_tokens;
      take_memory_peak(model.device());
      GenerationStatistics statistics;
      const auto begin = std::chrono::steady_clock::now();
      const auto generated = model.generate(prompts, settings, &statistics);
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
      if (!generated) {
        std::fprintf(stderr, "dicebench-engine-benchmark: error: %s\n", generated.error().message.c_str());
        return 1;
      }
      const double passes_per_s = static_cast<double>(statistics.forward_passes) / seconds;
      const double tokens_per_s = static_cast<double>(statistics.generated_tokens) / seconds;
      const int64_t peak_bytes = take_memory_peak(model.device());
      std::printf("%-8s %6lld %10lld %10.2f %12.1f %12.1f %10.2f %10.2f\n", name.c_str(), static_cast<long long>(batch),
                  static_cast<long long>(statistics.forward_passes), seconds, passes_per_s, tokens_per_s,
                  static_cast<double>(statistics.generated_tokens) / static_cast<double>(statistics.forward_passes),
                  static_cast<double>(peak_bytes) / (1 << 30));
      std::fflush(stdout);
      results.push_back({{"preset", name},
                         {"batch", batch},
                         {"prompt_tokens", prompt_tokens},
                         {"new_tokens", new_tokens},
                         {"forward_passes", statistics.forward_passes},
                         {"generated_tokens", statistics.generated_tokens},
                         {"seconds", seconds},
                         {"forward_passes_per_s", passes_per_s},
                         {"tokens_per_s", tokens_per_s},
                         {"peak_device_bytes", peak_bytes}});
    }
  }
  if (!json_path.empty()) {
    const nlohmann::json report{{"model_path", model_path},
                                {"device", model.device()},
                                {"dtype", dtype_name(model.dtype())},
                                {"cuda_graphs", !no_cuda_graphs},
                                {"fused_kernels", model.fused_kernels()},
                                {"load_seconds", load_s},
                                {"results", results}};
    std::ofstream(json_path) << report.dump(2) << "\n";
  }
  return 0;
}
