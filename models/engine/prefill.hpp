// Prefilling the prompts of a batch into the KV cache in chunks of whole blocks, so that the
// activations and attention bias of a large batch stay a few GB however long its prompts are
// (a level of 100 prompts of 2000 tokens at once would need ~40 GB beside its KV cache).
#pragma once

#include <cstdint>

#include "models/engine/aten.hpp"
#include "models/engine/batch_layout.hpp"
#include "models/engine/generation.hpp"
#include "models/engine/qwen3_model.hpp"

namespace dicebench::engine {

// Runs tokens [rows, columns] (left-padded rows at cache columns [0, columns)) through the
// model, one forward pass per chunk of at most model.prefill_chunk_tokens() tokens (at least one
// block per row), counted in statistics (forward_passes, prefilled_tokens). Returns the float32
// logits of the last logits_count columns.
at::Tensor prefill(Qwen3Model& model, const BatchLayout& layout, const at::Tensor& tokens, int64_t logits_count,
                   GenerationStatistics& statistics);

}  // namespace dicebench::engine
