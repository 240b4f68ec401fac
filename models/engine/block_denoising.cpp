// The denoising loop of block diffusion (block_denoising.hpp). Every row works on the same cache
// columns: a denoising pass puts the block's keys and values in the block's own columns, past
// everything committed, and the next pass overwrites them, so the committed cache is only read;
// the writing pass leaves the finished block's there.
#include "models/engine/block_denoising.hpp"

#include <algorithm>
#include <limits>

#include "models/engine/token_sampler.hpp"

namespace dicebench::engine {
namespace {

// The rank of each position when sorted by `key` (stable: ties keep the lower index first).
at::Tensor stable_ranks(const at::Tensor& key, bool descending) {
  const auto order = std::get<1>(key.sort(/*stable=*/true, -1, descending));
  const auto positions = at::arange(key.size(-1), order.options()).expand_as(order);
  return at::empty_like(order).scatter_(-1, order, positions);
}

// Which masked positions this pass commits: [rows, block] bool. `k`: [rows, 1] commits due.
at::Tensor positions_to_commit(const DecodeSettings& settings, const at::Tensor& masked, const at::Tensor& k,
                               const DrawnTokens& drawn) {
  constexpr double kInfinity = std::numeric_limits<double>::infinity();
  const auto most_confident = [&] {
    const auto confidence = drawn.confidence.masked_fill(masked.logical_not(), -kInfinity);
    return masked.logical_and(stable_ranks(confidence, /*descending=*/true).lt(k));
  };
  switch (settings.remasking) {
    case Remasking::sequential:
      return masked.logical_and(masked.to(at::kLong).cumsum(-1).le(k));
    case Remasking::low_confidence_static:
      return most_confident();
    case Remasking::low_confidence_dynamic: {
      const auto confident = masked.logical_and(drawn.confidence.gt(settings.confidence_threshold));
      const auto enough = confident.sum(-1, /*keepdim=*/true).ge(k);
      return at::where(enough, confident, most_confident());
    }
    case Remasking::entropy_bounded: {
      const auto entropy = drawn.entropy.masked_fill(masked.logical_not(), kInfinity);
      const auto sorted = std::get<0>(entropy.sort(/*stable=*/true, -1, /*descending=*/false));
      const auto within = sorted.cumsum(-1).le(settings.entropy_bound).sum(-1, /*keepdim=*/true);
      const auto count = at::minimum(within.clamp_min(1), masked.sum(-1, /*keepdim=*/true));
      return masked.logical_and(stable_ranks(entropy, /*descending=*/false).lt(count));
    }
  }
  return at::zeros_like(masked);
}

}  // namespace

std::vector<Generation> denoise_blocks(Qwen3Model& model, const BatchLayout& layout, const DecodeSettings& settings,
                                       const DenoisingRegion& region, GenerationStatistics& statistics) {
  const int64_t block = settings.block_length, mask_id = *mask_token_of(settings, model.config());
  const auto rows = static_cast<size_t>(layout.rows());
  auto generator = seeded_generator(model.device(), settings.seed);
  const auto long_options = at::TensorOptions().dtype(at::kLong);
  const auto schedule = transfer_schedule(block, settings.denoising_steps);
  const bool with_entropy = settings.remasking == Remasking::entropy_bounded;
  // sequential and low_confidence_static commit exactly min(masks left, due) per row and pass, so
  // the host counts the masks itself and the passes of a block follow each other without waiting
  // for the device; the other strategies read the count back after every pass.
  const bool counted_on_host =
      settings.remasking == Remasking::sequential || settings.remasking == Remasking::low_confidence_static;
  std::vector<int64_t> masks_left(rows);
  std::vector<Generation> generations(rows);
  std::vector<bool> finished(rows, false);
  auto current = at::tensor(region.first_block, long_options).view({layout.rows(), block}).to(model.device());
  for (int64_t index = 0; index < region.blocks; ++index) {
    const int64_t column = region.first_column + index * block;
    const auto positions = layout.positions(column, block);
    const auto mask = layout.mask(column, block);
    for (size_t row = 0; row < rows; ++row) masks_left[row] = index == 0 ? block - region.given[row] : block;
    for (size_t step = 0;; ++step) {
      const auto masked = current.eq(mask_id);
      const auto masked_count = masked.sum(-1, /*keepdim=*/true);
      const bool block_done = counted_on_host
                                  ? std::all_of(masks_left.begin(), masks_left.end(), [](int64_t n) { return n == 0; })
                                  : masked_count.max().item<int64_t>() == 0;
      if (block_done) {
        model.step(current, positions, mask, column, 0);  // the writing pass
        ++statistics.forward_passes;
        break;
      }
      const auto logits = model.step(current, positions, mask, column, block);
      ++statistics.forward_passes;
      // The mask token is never drawn: committed, it would stay masked and the block never end.
      logits.select(-1, mask_id).fill_(-std::numeric_limits<double>::infinity());
      const auto drawn = draw_tokens(logits.reshape({layout.rows() * block, -1}), settings.sampling,
                                     settings.confidence, with_entropy, generator);
      const DrawnTokens per_position{drawn.tokens.view({layout.rows(), block}),
                                     drawn.confidence.view({layout.rows(), block}),
                                     with_entropy ? drawn.entropy.view({layout.rows(), block}) : at::Tensor()};
      // Past the schedule (only entropy_bounded can get there) each pass commits at least one.
      const int64_t due = step < schedule.size() ? schedule[step] : 1;
      for (auto& left : masks_left) left -= std::min(left, due);
      const auto k = at::minimum(masked_count, at::full_like(masked_count, due));
      current = at::where(positions_to_commit(settings, masked, k, per_position), per_position.tokens, current);
    }

    const auto host = current.to(at::kCPU).contiguous();
    const auto* tokens = host.data_ptr<int64_t>();
    bool all_done = true;
    for (size_t row = 0; row < rows; ++row) {
      auto& generation = generations[row];
      if (finished[row]) continue;
      const int64_t skip = index == 0 ? region.given[row] : 0;
      const auto* row_tokens = tokens + static_cast<int64_t>(row) * block;
      generation.tokens.insert(generation.tokens.end(), row_tokens + skip, row_tokens + block);
      const bool full = static_cast<int64_t>(generation.tokens.size()) >= region.wanted[row];
      if (full) generation.tokens.resize(static_cast<size_t>(region.wanted[row]));
      const auto stop = std::find_first_of(generation.tokens.begin(), generation.tokens.end(),
                                           settings.stop_tokens.begin(), settings.stop_tokens.end());
      if (stop != generation.tokens.end()) {
        generation.tokens.erase(stop, generation.tokens.end());
        generation.stopped = true;
      }
      finished[row] = full || generation.stopped;
      all_done = all_done && finished[row];
    }
    if (all_done) break;
    current = at::full({layout.rows(), block}, mask_id, long_options.device(model.device()));
  }
  for (const auto& generation : generations)
    statistics.generated_tokens += static_cast<int64_t>(generation.tokens.size());
  return generations;
}

}  // namespace dicebench::engine
