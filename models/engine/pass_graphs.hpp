// CUDA graphs of the decoding passes. A decoding pass (one token, or one block, per row) costs the
// GPU a few milliseconds of weight reads but launches some 700 kernels, so issued one by one the
// host is the limit. Each shape (rows, new positions, logits wanted, attention span rounded up
// to kKeyBucket cache columns) is captured once and then replayed: the pass's inputs are copied
// into the graph's own tensors, the columns past the real span are masked in the bias.
#pragma once

#include <cstdint>
#include <memory>

#include "models/engine/aten.hpp"

namespace dicebench::engine {

class Qwen3Model;

// Attention spans of graphs are whole multiples of this many cache columns (and so is the cache).
inline constexpr int64_t kKeyBucket = 256;

class PassGraphs {
 public:
  virtual ~PassGraphs() = default;
  // Qwen3Model::forward's arguments and result; the logits stay valid until the next run.
  virtual at::Tensor run(const at::Tensor& tokens, const at::Tensor& positions, const at::Tensor& mask, int64_t start,
                         int64_t logits_count) = 0;
  // Drops every graph (the KV cache they read is about to move).
  virtual void clear() = 0;
};

// Graphs for `model` on its CUDA device; nullptr where torch was built without CUDA.
std::unique_ptr<PassGraphs> make_pass_graphs(Qwen3Model& model);

}  // namespace dicebench::engine
