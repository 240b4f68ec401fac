// Positions and block-causal masks of a left-padded batch.
#include "models/engine/batch_layout.hpp"

#include <algorithm>

namespace dicebench::engine {

BatchLayout::BatchLayout(std::vector<int64_t> padding, int64_t block_length, at::Device device)
    : padding_(std::move(padding)), block_length_(block_length) {
  any_padding_ = std::any_of(padding_.begin(), padding_.end(), [](int64_t p) { return p > 0; });
  padding_tensor_ = at::tensor(padding_, at::TensorOptions().dtype(at::kLong)).to(device);
}

BatchLayout::BatchLayout(std::vector<int64_t> padding, int64_t block_length, at::Tensor column_positions)
    : BatchLayout(std::move(padding), block_length, column_positions.device()) {
  TORCH_CHECK(
      column_positions.dim() == 2 && column_positions.size(0) == rows() && column_positions.scalar_type() == at::kLong,
      "BatchLayout: column_positions must be [rows, columns] int64");
  column_positions_ = std::move(column_positions);
}

at::Tensor BatchLayout::positions(int64_t start, int64_t count) const {
  if (column_positions_.defined()) return column_positions_.narrow(1, start, count);
  const auto columns = at::arange(start, start + count, padding_tensor_.options());
  return columns.unsqueeze(0).sub(padding_tensor_.unsqueeze(1)).clamp_min(0);
}

at::Tensor BatchLayout::mask(int64_t start, int64_t count) const {
  const int64_t keys = start + count;
  if (!any_padding_ && start / block_length_ == (keys - 1) / block_length_) return {};
  const auto key_columns = at::arange(keys, padding_tensor_.options()).view({1, 1, 1, keys});
  const auto query_columns = at::arange(start, keys, padding_tensor_.options()).view({1, 1, count, 1});
  const auto key_blocks = key_columns.div(block_length_, "floor");
  const auto query_blocks = query_columns.div(block_length_, "floor");
  const auto not_padding = key_columns.ge(padding_tensor_.view({rows(), 1, 1, 1}));
  return key_blocks.le(query_blocks).logical_and(not_padding).logical_or(key_columns.eq(query_columns));
}

}  // namespace dicebench::engine
