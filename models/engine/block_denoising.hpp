// The per-block loop of block-diffusion decoding (SDAR / DICE), shared by generation and
// infilling: each block's masked positions are committed by read-only denoising passes chosen by
// the remasking strategy, then one more pass writes the finished block into the KV cache. The
// callers lay the batch out and prefill what comes before the first block.
#pragma once

#include <cstdint>
#include <vector>

#include "models/engine/batch_layout.hpp"
#include "models/engine/decode_settings.hpp"
#include "models/engine/generation.hpp"
#include "models/engine/qwen3_model.hpp"

namespace dicebench::engine {

// The blocks to denoise: `blocks` blocks of settings.block_length columns from cache column
// `first_column` on, every column before it already in the cache.
struct DenoisingRegion {
  int64_t first_column = 0;
  int64_t blocks = 0;
  // [rows * block_length]: each row's first block, the mask token where it is to be generated
  // (generation starts it with the prompt's last, partial block; infilling with masks only).
  std::vector<int64_t> first_block;
  std::vector<int64_t> given;   // per row: how many of its first block's tokens are given, not generated
  std::vector<int64_t> wanted;  // per row: how many generated tokens it returns at most
};

// Denoises the region's blocks one after another, all rows at once. Returns per row the generated
// tokens, cut to `wanted` and before the first stop token of settings.stop_tokens (stopped); the
// blocks left once every row is finished are skipped. Adds to forward_passes and generated_tokens.
std::vector<Generation> denoise_blocks(Qwen3Model& model, const BatchLayout& layout, const DecodeSettings& settings,
                                       const DenoisingRegion& region, GenerationStatistics& statistics);

}  // namespace dicebench::engine
