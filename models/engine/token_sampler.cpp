// Temperature / top-k / top-p filtering and the draw.
#include "models/engine/token_sampler.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/detail/CUDAHooksInterface.h>

#include <limits>
#include <mutex>

namespace dicebench::engine {
namespace {

constexpr double kNegativeInfinity = -std::numeric_limits<double>::infinity();

// Keeps the logits at least as large as the k-th largest (ties with it stay).
at::Tensor keep_top_k(const at::Tensor& logits, int64_t k) {
  const int64_t kept = std::min(k, logits.size(-1));
  const auto kth = std::get<0>(logits.topk(kept, -1)).narrow(-1, kept - 1, 1);
  return logits.masked_fill(logits.lt(kth), kNegativeInfinity);
}

// Keeps the smallest prefix of the sorted distribution whose mass exceeds p (at least one token).
at::Tensor keep_top_p(const at::Tensor& logits, double p) {
  const auto [sorted, order] = logits.sort(-1, /*descending=*/true);
  auto remove = sorted.softmax(-1).cumsum(-1).gt(p);
  remove = at::cat({at::zeros_like(remove.narrow(-1, 0, 1)), remove.narrow(-1, 0, remove.size(-1) - 1)}, -1);
  return logits.masked_fill(at::zeros_like(remove).scatter(-1, order, remove), kNegativeInfinity);
}

at::Tensor entropy_of(const at::Tensor& probabilities) {
  return probabilities.mul(probabilities.clamp_min(std::numeric_limits<float>::min()).log()).sum(-1).neg();
}

}  // namespace

at::Generator seeded_generator(at::Device device, uint64_t seed) {
  auto generator = device.is_cuda()
                       ? at::detail::getCUDAHooks().getNewGenerator(device.index() < 0 ? 0 : device.index())
                       : at::detail::createCPUGenerator(seed);
  std::lock_guard<std::mutex> lock(generator.mutex());
  generator.set_current_seed(seed);
  return generator;
}

DrawnTokens draw_tokens(const at::Tensor& logits, const SamplingSettings& sampling, ConfidenceSource source,
                        bool with_entropy, at::Generator& generator) {
  DrawnTokens drawn;
  const bool greedy = sampling.temperature == 0;
  const auto scaled = greedy || sampling.temperature == 1.0 ? logits : logits.div(sampling.temperature);
  // A filtered distribution with a single survivor is one-hot: no draw is needed (top_k = 1 is
  // what DICE's published setting uses).
  if (greedy || sampling.top_k == 1) {
    drawn.tokens = scaled.argmax(-1);
    if (source == ConfidenceSource::filtered) {
      drawn.confidence = at::ones_like(drawn.tokens, drawn.tokens.options().dtype(at::kFloat));
      if (with_entropy) drawn.entropy = at::zeros_like(drawn.confidence);
    } else {
      const auto probabilities = scaled.softmax(-1);
      drawn.confidence = probabilities.gather(-1, drawn.tokens.unsqueeze(-1)).squeeze(-1);
      if (with_entropy) drawn.entropy = entropy_of(probabilities);
    }
    return drawn;
  }
  auto filtered = scaled;
  if (sampling.top_k > 0) filtered = keep_top_k(filtered, sampling.top_k);
  if (sampling.top_p < 1.0) filtered = keep_top_p(filtered, sampling.top_p);
  const auto filtered_probabilities = filtered.softmax(-1);
  drawn.tokens = at::multinomial(filtered_probabilities, 1, /*replacement=*/false, generator).squeeze(-1);
  const auto probabilities = source == ConfidenceSource::filtered ? filtered_probabilities : scaled.softmax(-1);
  drawn.confidence = probabilities.gather(-1, drawn.tokens.unsqueeze(-1)).squeeze(-1);
  if (with_entropy) drawn.entropy = entropy_of(probabilities);
  return drawn;
}

}  // namespace dicebench::engine
