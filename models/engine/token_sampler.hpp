// Drawing tokens from logits as SDAR's and DICE's decoders do: temperature, then top-k (ties with
// the k-th logit kept), then top-p, then one multinomial draw per row; the drawn token's
// probability is its confidence. Temperature 0 is greedy (argmax, lowest index among ties).
#pragma once

#include "models/engine/aten.hpp"
#include "models/engine/decode_settings.hpp"

namespace dicebench::engine {

struct DrawnTokens {
  at::Tensor tokens;      // [rows] int64
  at::Tensor confidence;  // [rows] float32: the token's probability
  at::Tensor entropy;     // [rows] float32, when asked for
};

// A generator on `device` seeded with `seed`.
at::Generator seeded_generator(at::Device device, uint64_t seed);

// logits: [rows, vocab] float32.
DrawnTokens draw_tokens(const at::Tensor& logits, const SamplingSettings& sampling, ConfidenceSource source,
                        bool with_entropy, at::Generator& generator);

}  // namespace dicebench::engine
