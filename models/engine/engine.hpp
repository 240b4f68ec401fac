// The engine's public interface: load a Qwen3-family model folder onto a device and generate
// token ids for batches of prompts, or fill spans between given tokens. No torch header is
// reachable from here, so model plugins compile against it cheaply; exceptions from libtorch stop
// inside and come back as errors.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/base/result.hpp"
#include "models/engine/decode_settings.hpp"
#include "models/engine/generation.hpp"
#include "models/engine/model_config.hpp"

namespace dicebench::engine {

struct EngineOptions {
  std::string device = "cpu";  // "cpu", "cuda", "cuda:1"
  // Compute dtype; default: float32 on the CPU, config.json's torch_dtype (else bfloat16) on CUDA.
  std::optional<DType> dtype;
  // On CUDA, replay decoding passes as CUDA graphs (off: every kernel launched one by one).
  bool cuda_graphs = true;
  // On CUDA in bf16/fp16, the fused kernels for norms, RoPE and SwiGLU (off: ATen's kernels).
  bool fused_kernels = true;
  // Tokens (rows x columns) per prefill pass: longer prompts are prefilled in chunks of whole blocks.
  int64_t prefill_chunk_tokens = 16384;
};

class Engine {
 public:
  // Reads config.json, generation_config.json and the safetensors weights of `folder`.
  static Result<std::unique_ptr<Engine>> load(const std::filesystem::path& folder, const EngineOptions& options);
  ~Engine();

  const ModelConfig& config() const;
  const GenerationConfig& generation_config() const;
  std::string device() const;
  DType dtype() const;
  bool fused_kernels() const;  // whether the fused kernels run (asked for, built, CUDA, bf16/fp16)

  // Generates for every prompt at once (one left-padded batch). `statistics`, when given, is
  // added to.
  Result<std::vector<Generation>> generate(const TokenRows& prompts, const DecodeSettings& settings,
                                           GenerationStatistics* statistics = nullptr);

  // Fills each row's span natively with block diffusion (settings.mode block_diffusion, a mask
  // token): per row, `before` and `after` are prefilled once into the KV cache (the suffix before
  // the span in cache order, after it in rotary positions), then the span's masked blocks (its
  // span_tokens rounded up to whole blocks) are denoised as generate() denoises generated ones,
  // each attending to the whole context. Per row, the span's tokens cut to span_tokens and before
  // the first stop token (stopped). settings.max_new_tokens is not used. `statistics`, when
  // given, is added to.
  Result<std::vector<Generation>> infill(const std::vector<InfillRow>& rows, const DecodeSettings& settings,
                                         GenerationStatistics* statistics = nullptr);

  // One forward pass over whole rows (of different lengths: left-padded together) under the
  // block-causal mask of `block_length` (1: causal). Per row, float32 logits of its positions,
  // row-major [position][vocab]. For tests and tools.
  Result<std::vector<std::vector<float>>> logits(const TokenRows& rows, int64_t block_length);

 private:
  struct State;
  explicit Engine(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace dicebench::engine
