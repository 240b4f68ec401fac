// Block-diffusion generation as SDAR and DICE do it. The generated region is cut into blocks of
// block_length positions set to the mask token; the prompt's whole blocks are prefilled into the
// KV cache (block-causal), and the blocks are denoised one after another (block_denoising.hpp),
// the first one starting with the prompt's last, partial block. Rows are left-padded by whole
// blocks, so that blocks count from each row's first token and every row works on the same
// cache columns.
#include <algorithm>

#include "models/engine/batch_layout.hpp"
#include "models/engine/block_denoising.hpp"
#include "models/engine/decoders.hpp"
#include "models/engine/prefill.hpp"

namespace dicebench::engine {

Result<std::vector<Generation>> decode_block_diffusion(Qwen3Model& model, const TokenRows& prompts,
                                                       const DecodeSettings& settings,
                                                       GenerationStatistics& statistics) {
  const int64_t block = settings.block_length, mask_id = *mask_token_of(settings, model.config());
  const auto rows = static_cast<int64_t>(prompts.size());
  // Per row, as SDAR: prefill floor(P / block) blocks; the region up to P + max_new_tokens,
  // rounded up to whole blocks, is denoised block by block.
  std::vector<int64_t> prefill_blocks, decode_blocks;
  for (const auto& prompt : prompts) {
    const auto length = static_cast<int64_t>(prompt.size());
    prefill_blocks.push_back(length / block);
    decode_blocks.push_back((length + settings.max_new_tokens + block - 1) / block - length / block);
  }
  const int64_t prefill_columns = *std::max_element(prefill_blocks.begin(), prefill_blocks.end()) * block;
  DenoisingRegion region{prefill_columns,
                         *std::max_element(decode_blocks.begin(), decode_blocks.end()),
                         {},
                         {},
                         std::vector<int64_t>(prompts.size(), settings.max_new_tokens)};

  std::vector<int64_t> padding, prompt_columns;
  for (size_t row = 0; row < prompts.size(); ++row) {
    const auto& prompt = prompts[row];
    const int64_t whole = prefill_blocks[row] * block, partial = static_cast<int64_t>(prompt.size()) - whole;
    padding.push_back(prefill_columns - whole);
    prompt_columns.insert(prompt_columns.end(), static_cast<size_t>(padding.back()), mask_id);
    prompt_columns.insert(prompt_columns.end(), prompt.begin(), prompt.begin() + whole);
    region.first_block.insert(region.first_block.end(), prompt.begin() + whole, prompt.end());
    region.first_block.insert(region.first_block.end(), static_cast<size_t>(block - partial), mask_id);
    region.given.push_back(partial);
  }
  const BatchLayout layout(padding, block, model.device());
  model.reserve_cache(rows, prefill_columns + region.blocks * block);
  if (prefill_columns > 0)
    prefill(model, layout,
            at::tensor(prompt_columns, at::TensorOptions().dtype(at::kLong))
                .view({rows, prefill_columns})
                .to(model.device()),
            0, statistics);
  return denoise_blocks(model, layout, settings, region, statistics);
}

}  // namespace dicebench::engine
