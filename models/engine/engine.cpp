// Engine: loading (config, checkpoint, weights onto the device), input checks, and dispatch to
// the decoders; libtorch's exceptions end here as errors.
#include "models/engine/engine.hpp"

#include <ATen/detail/CUDAHooksInterface.h>
#include <fmt/format.h>

#include "models/engine/batch_layout.hpp"
#include "models/engine/checkpoint.hpp"
#include "models/engine/decoders.hpp"
#include "models/engine/qwen3_model.hpp"

namespace dicebench::engine {
namespace {

at::ScalarType scalar_type(DType dtype) {
  switch (dtype) {
    case DType::float32:
      return at::kFloat;
    case DType::float16:
      return at::kHalf;
    case DType::bfloat16:
      return at::kBFloat16;
  }
  return at::kFloat;
}

// Runs `body`, turning libtorch's exceptions into an error that says what was being done.
template <class T, class Body>
Result<T> guarded(const std::string& what, Body&& body) {
  try {
    return body();
  } catch (const c10::Error& error) {
    return make_error(fmt::format("{}: {}", what, error.what_without_backtrace()));
  } catch (const std::exception& error) {
    return make_error(fmt::format("{}: {}", what, error.what()));
  }
}

}  // namespace

struct Engine::State {
  std::filesystem::path folder;
  GenerationConfig generation_config;
  DType dtype;
  std::unique_ptr<Qwen3Model> model;
};

Engine::Engine(std::unique_ptr<State> state) : state_(std::move(state)) {}
Engine::~Engine() = default;

const ModelConfig& Engine::config() const { return state_->model->config(); }
const GenerationConfig& Engine::generation_config() const { return state_->generation_config; }
std::string Engine::device() const { return state_->model->device().str(); }
DType Engine::dtype() const { return state_->dtype; }
bool Engine::fused_kernels() const { return state_->model->fused_kernels(); }

Result<std::unique_ptr<Engine>> Engine::load(const std::filesystem::path& folder, const EngineOptions& options) {
  auto config = load_model_config(folder);
  if (!config) return config.error();
  auto generation_config = load_generation_config(folder);
  if (!generation_config) return generation_config.error();
  auto checkpoint = Checkpoint::open(folder);
  if (!checkpoint) return checkpoint.error();
  return guarded<std::unique_ptr<Engine>>(folder.string(), [&]() -> Result<std::unique_ptr<Engine>> {
    const at::Device device(options.device);
    if (!device.is_cpu() && !device.is_cuda())
      return make_error(fmt::format("device '{}' is not supported (cpu or cuda)", options.device));
    if (device.is_cuda() && !at::detail::getCUDAHooks().hasCUDA())
      return make_error(fmt::format("device '{}': no CUDA device is visible to torch", options.device));
    auto state = std::make_unique<State>();
    state->folder = folder;
    state->generation_config = std::move(*generation_config);
    state->dtype = options.dtype.value_or(device.is_cpu() ? DType::float32 : config->dtype.value_or(DType::bfloat16));
    auto weights = load_qwen3_weights(*checkpoint, *config, device, scalar_type(state->dtype));
    if (!weights) return weights.error();
    state->model = std::make_unique<Qwen3Model>(std::move(*config), std::move(*weights), device,
                                                scalar_type(state->dtype), options);
    return std::unique_ptr<Engine>(new Engine(std::move(state)));
  });
}

namespace {

Result<void> check_token_ids(const std::vector<int64_t>& tokens, const ModelConfig& config, const std::string& what) {
  for (const auto id : tokens)
    if (id < 0 || id >= config.vocab_size)
      return make_error(
          fmt::format("{}: token id {} is outside the vocabulary ({} tokens)", what, id, config.vocab_size));
  return {};
}

Result<void> check_rows(const TokenRows& rows, const ModelConfig& config, int64_t positions_needed_beyond) {
  if (rows.empty()) return make_error("no prompts given");
  for (size_t row = 0; row < rows.size(); ++row) {
    if (rows[row].empty()) return make_error(fmt::format("prompt {} is empty", row));
    DICEBENCH_TRY(check_token_ids(rows[row], config, fmt::format("prompt {}", row)));
    const auto needed = static_cast<int64_t>(rows[row].size()) + positions_needed_beyond;
    if (needed > config.max_position_embeddings)
      return make_error(
          fmt::format("prompt {} has {} tokens; with {} more positions it exceeds the model's context of {} "
                      "(max_position_embeddings in config.json)",
                      row, rows[row].size(), positions_needed_beyond, config.max_position_embeddings));
  }
  return {};
}

Result<void> check_infill_rows(const std::vector<InfillRow>& rows, const ModelConfig& config, int64_t block_length) {
  if (rows.empty()) return make_error("no infill rows given");
  for (size_t row = 0; row < rows.size(); ++row) {
    const auto& [before, after, span_tokens] = rows[row];
    if (span_tokens < 1)
      return make_error(fmt::format("infill row {}: span_tokens must be at least 1, got {}", row, span_tokens));
    if (before.empty() && after.empty())
      return make_error(fmt::format("infill row {}: before and after are both empty", row));
    DICEBENCH_TRY(check_token_ids(before, config, fmt::format("infill row {} (before)", row)));
    DICEBENCH_TRY(check_token_ids(after, config, fmt::format("infill row {} (after)", row)));
    const int64_t span = (span_tokens + block_length - 1) / block_length * block_length;
    const auto needed = static_cast<int64_t>(before.size() + after.size()) + span;
    if (needed > config.max_position_embeddings)
      return make_error(
          fmt::format("infill row {}: {} tokens before, {} after and a span of {} (whole blocks) exceed the model's "
                      "context of {} (max_position_embeddings in config.json)",
                      row, before.size(), after.size(), span, config.max_position_embeddings));
  }
  return {};
}

void add_statistics(GenerationStatistics* total, const GenerationStatistics& call) {
  if (!total) return;
  total->forward_passes += call.forward_passes;
  total->prefilled_tokens += call.prefilled_tokens;
  total->generated_tokens += call.generated_tokens;
}

}  // namespace

Result<std::vector<Generation>> Engine::generate(const TokenRows& prompts, const DecodeSettings& settings,
                                                 GenerationStatistics* statistics) {
  const auto& config = state_->model->config();
  DICEBENCH_TRY(validate_decode_settings(settings, config));
  // Block diffusion fills whole blocks past the prompt.
  const int64_t beyond = settings.mode == DecodeMode::block_diffusion
                             ? settings.max_new_tokens + settings.block_length - 1
                             : settings.max_new_tokens;
  DICEBENCH_TRY(check_rows(prompts, config, beyond));
  GenerationStatistics local;
  auto result = guarded<std::vector<Generation>>(state_->folder.string(), [&] {
    return settings.mode == DecodeMode::block_diffusion
               ? decode_block_diffusion(*state_->model, prompts, settings, local)
               : decode_autoregressive(*state_->model, prompts, settings, local);
  });
  add_statistics(statistics, local);
  return result;
}

Result<std::vector<Generation>> Engine::infill(const std::vector<InfillRow>& rows, const DecodeSettings& settings,
                                               GenerationStatistics* statistics) {
  const auto& config = state_->model->config();
  if (settings.mode != DecodeMode::block_diffusion)
    return make_error("native infilling needs block diffusion: the settings decode autoregressively");
  if (!mask_token_of(settings, config))
    return make_error(
        fmt::format("native infilling needs block diffusion, and so a mask token: mask_token_id in config.json ({} has "
                    "none) or in the settings",
                    config.architecture));
  DICEBENCH_TRY(validate_decode_settings(settings, config));
  DICEBENCH_TRY(check_infill_rows(rows, config, settings.block_length));
  GenerationStatistics local;
  auto result = guarded<std::vector<Generation>>(state_->folder.string(),
                                                 [&] { return decode_infill(*state_->model, rows, settings, local); });
  add_statistics(statistics, local);
  return result;
}

Result<std::vector<std::vector<float>>> Engine::logits(const TokenRows& rows, int64_t block_length) {
  if (block_length < 1) return make_error(fmt::format("block_length must be at least 1, got {}", block_length));
  DICEBENCH_TRY(check_rows(rows, state_->model->config(), 0));
  return guarded<std::vector<std::vector<float>>>(
      state_->folder.string(), [&]() -> Result<std::vector<std::vector<float>>> {
        int64_t longest = 0;
        for (const auto& row : rows) longest = std::max(longest, static_cast<int64_t>(row.size()));
        std::vector<int64_t> padding, tokens;
        for (const auto& row : rows) {
          padding.push_back(longest - static_cast<int64_t>(row.size()));
          tokens.insert(tokens.end(), static_cast<size_t>(padding.back()), 0);
          tokens.insert(tokens.end(), row.begin(), row.end());
        }
        // Blocks count from each row's first token, so left padding must be whole blocks.
        for (auto& pad : padding)
          if (pad % block_length != 0)
            return make_error(fmt::format(
                "rows of different lengths must differ by whole blocks of {} for a block-causal pass", block_length));
        const auto count = static_cast<int64_t>(rows.size());
        const BatchLayout layout(padding, block_length, state_->model->device());
        auto& model = *state_->model;
        model.reserve_cache(count, longest);
        const auto input =
            at::tensor(tokens, at::TensorOptions().dtype(at::kLong)).view({count, longest}).to(model.device());
        const auto logits = model.forward(input, layout.positions(0, longest), layout.mask(0, longest), 0, longest)
                                .to(at::kCPU)
                                .contiguous();
        std::vector<std::vector<float>> result;
        for (int64_t row = 0; row < count; ++row) {
          const auto own =
              logits[row]
                  .narrow(0, padding[static_cast<size_t>(row)], longest - padding[static_cast<size_t>(row)])
                  .contiguous();
          result.emplace_back(own.data_ptr<float>(), own.data_ptr<float>() + own.numel());
        }
        return result;
      });
}

}  // namespace dicebench::engine
