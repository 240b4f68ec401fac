// Chunked prefill (prefill.hpp).
#include "models/engine/prefill.hpp"

#include <algorithm>

namespace dicebench::engine {

at::Tensor prefill(Qwen3Model& model, const BatchLayout& layout, const at::Tensor& tokens, int64_t logits_count,
                   GenerationStatistics& statistics) {
  const int64_t rows = tokens.size(0), columns = tokens.size(1), block = layout.block_length();
  const int64_t chunk = std::max<int64_t>(1, model.prefill_chunk_tokens() / rows / block) * block;
  at::Tensor logits;
  for (int64_t start = 0; start < columns; start += chunk) {
    const int64_t count = std::min(chunk, columns - start);
    const bool last = start + count == columns;
    logits = model.forward(tokens.narrow(1, start, count), layout.positions(start, count), layout.mask(start, count),
                           start, last ? std::min(logits_count, count) : 0);
    ++statistics.forward_passes;
    statistics.prefilled_tokens += rows * count;
  }
  return logits;
}

}  // namespace dicebench::engine
