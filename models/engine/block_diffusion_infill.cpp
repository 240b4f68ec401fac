// Native infilling with block diffusion: the span between `before` and `after` is denoised as
// generated blocks are, attending to both. A block-causal model (SDAR, DICE) sees only earlier
// blocks, so the suffix sits BEFORE the span in the KV cache while its rotary positions lie AFTER
// it. Per row, cache columns are: left padding, `before`, `after`, then the span's blocks; rotary
// positions are 0..B-1 for `before`, B..B+M-1 for the span (M: span_tokens rounded up to whole
// blocks) and B+M..B+M+A-1 for `after`. The context (before + after) is left-padded to the same
// whole number of blocks in every row, so that each row's span starts at the same block boundary
// (the context's blocks are counted back from the span: its first block may be partial), and is
// prefilled once, in chunks, under the block-causal mask of its columns. The span's blocks are
// then denoised as generation's are (block_denoising.hpp), each attending to the whole context and
// the span's committed blocks; the context is never encoded again.
#include <algorithm>

#include "models/engine/batch_layout.hpp"
#include "models/engine/block_denoising.hpp"
#include "models/engine/decoders.hpp"
#include "models/engine/prefill.hpp"

namespace dicebench::engine {

Result<std::vector<Generation>> decode_infill(Qwen3Model& model, const std::vector<InfillRow>& rows,
                                              const DecodeSettings& settings, GenerationStatistics& statistics) {
  const int64_t block = settings.block_length, mask_id = *mask_token_of(settings, model.config());
  const auto round_up = [block](int64_t n) { return (n + block - 1) / block * block; };
  const auto count = static_cast<int64_t>(rows.size());
  int64_t context_columns = 0, span_columns = 0;
  for (const auto& row : rows) {
    context_columns = std::max(context_columns, round_up(static_cast<int64_t>(row.before.size() + row.after.size())));
    span_columns = std::max(span_columns, round_up(row.span_tokens));
  }
  const int64_t columns = context_columns + span_columns;
  DenoisingRegion region{context_columns,
                         span_columns / block,
                         std::vector<int64_t>(rows.size() * block, mask_id),
                         std::vector<int64_t>(rows.size(), 0),
                         {}};
  std::vector<int64_t> padding, context, positions;
  for (const auto& row : rows) {
    const auto before = static_cast<int64_t>(row.before.size()), after = static_cast<int64_t>(row.after.size());
    const int64_t span = round_up(row.span_tokens);
    padding.push_back(context_columns - before - after);
    context.insert(context.end(), static_cast<size_t>(padding.back()), mask_id);
    context.insert(context.end(), row.before.begin(), row.before.end());
    context.insert(context.end(), row.after.begin(), row.after.end());
    positions.insert(positions.end(), static_cast<size_t>(padding.back()), 0);
    for (int64_t i = 0; i < before; ++i) positions.push_back(i);
    for (int64_t i = 0; i < after; ++i) positions.push_back(before + span + i);
    // A row whose span has fewer blocks than the batch's denoises the surplus blocks at its last
    // block's positions (within the model's context); they are thrown away.
    for (int64_t i = 0; i < span_columns; ++i) positions.push_back(before + (i < span ? i : span - block + i % block));
    region.wanted.push_back(row.span_tokens);
  }
  const auto long_options = at::TensorOptions().dtype(at::kLong);
  const BatchLayout layout(padding, block,
                           at::tensor(positions, long_options).view({count, columns}).to(model.device()));
  model.reserve_cache(count, columns);
  prefill(model, layout, at::tensor(context, long_options).view({count, context_columns}).to(model.device()), 0,
          statistics);
  return denoise_blocks(model, layout, settings, region, statistics);
}

}  // namespace dicebench::engine
