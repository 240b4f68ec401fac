// Where the rows of a batch sit in the KV cache: row r is left-padded by padding[r] columns, so
// that attention blocks start at the same columns in every row and the whole batch advances one
// block (or one token, block_length = 1) at a time. Builds the positions and attention masks of a
// span of columns: a query sees the keys of its row that are not padding and whose block is not
// after its own (causal across blocks, full inside a block; block_length = 1 is the plain causal
// mask). Masks always follow the columns; rotary positions are column - padding, or, where the
// cache order is not the text order (infilling: the suffix sits before the span), given per column.
#pragma once

#include <cstdint>
#include <vector>

#include "models/engine/aten.hpp"

namespace dicebench::engine {

class BatchLayout {
 public:
  BatchLayout(std::vector<int64_t> padding, int64_t block_length, at::Device device);
  // With every column's rotary position given: column_positions [rows, columns] int64 on the
  // device (the entries of padding columns do not matter: their keys are masked).
  BatchLayout(std::vector<int64_t> padding, int64_t block_length, at::Tensor column_positions);

  int64_t rows() const { return static_cast<int64_t>(padding_.size()); }
  int64_t block_length() const { return block_length_; }
  const std::vector<int64_t>& padding() const { return padding_; }

  // Rotary positions of columns [start, start + count): [rows, count] int64, column - padding
  // (0 on padding columns), or the given column_positions.
  at::Tensor positions(int64_t start, int64_t count) const;
  // The mask of queries at columns [start, start + count) over keys at [0, start + count):
  // [rows, 1, count, start + count] bool, true where attention is allowed; undefined when every
  // query may see every key (no padding, all queries in the last key's block). A padding column's
  // query sees itself only, so that no softmax row is empty.
  at::Tensor mask(int64_t start, int64_t count) const;

 private:
  std::vector<int64_t> padding_;
  at::Tensor padding_tensor_;    // [rows] int64 on the device
  at::Tensor column_positions_;  // [rows, columns] int64 on the device, where given
  int64_t block_length_;
  bool any_padding_;
};

}  // namespace dicebench::engine
