// Autoregressive decoding: prefill the left-padded prompts, then one token per pass for all rows.
#include "models/engine/decoders.hpp"

#include <algorithm>

#include "models/engine/batch_layout.hpp"
#include "models/engine/prefill.hpp"
#include "models/engine/token_sampler.hpp"

namespace dicebench::engine {

Result<std::vector<Generation>> decode_autoregressive(Qwen3Model& model, const TokenRows& prompts,
                                                      const DecodeSettings& settings,
                                                      GenerationStatistics& statistics) {
  const auto rows = static_cast<int64_t>(prompts.size());
  int64_t longest = 0;
  for (const auto& prompt : prompts) longest = std::max(longest, static_cast<int64_t>(prompt.size()));
  const int64_t columns = longest + settings.max_new_tokens;

  std::vector<int64_t> padding, prompt_columns;
  prompt_columns.reserve(static_cast<size_t>(rows * longest));
  for (const auto& prompt : prompts) {
    padding.push_back(longest - static_cast<int64_t>(prompt.size()));
    prompt_columns.insert(prompt_columns.end(), static_cast<size_t>(padding.back()), 0);
    prompt_columns.insert(prompt_columns.end(), prompt.begin(), prompt.end());
  }
  const BatchLayout layout(padding, 1, model.device());
  model.reserve_cache(rows, columns);
  auto generator = seeded_generator(model.device(), settings.seed);
  const auto long_options = at::TensorOptions().dtype(at::kLong);

  const auto tokens = at::tensor(prompt_columns, long_options).view({rows, longest}).to(model.device());
  auto logits = prefill(model, layout, tokens, 1, statistics);

  std::vector<Generation> generations(static_cast<size_t>(rows));
  std::vector<bool> finished(static_cast<size_t>(rows), false);
  for (int64_t step = 0; step < settings.max_new_tokens; ++step) {
    const auto drawn = draw_tokens(logits.select(1, 0), settings.sampling, settings.confidence, false, generator);
    const auto host = drawn.tokens.to(at::kCPU);
    const auto* next = host.data_ptr<int64_t>();
    bool all_finished = true;
    for (size_t row = 0; row < generations.size(); ++row) {
      if (finished[row]) continue;
      if (std::find(settings.stop_tokens.begin(), settings.stop_tokens.end(), next[row]) !=
          settings.stop_tokens.end()) {
        finished[row] = generations[row].stopped = true;
        continue;
      }
      generations[row].tokens.push_back(next[row]);
      all_finished = false;
    }
    if (all_finished || step + 1 == settings.max_new_tokens) break;
    const int64_t column = longest + step;
    logits = model.step(drawn.tokens.view({rows, 1}), layout.positions(column, 1), layout.mask(column, 1), column, 1);
    ++statistics.forward_passes;
  }
  for (const auto& generation : generations)
    statistics.generated_tokens += static_cast<int64_t>(generation.tokens.size());
  return generations;
}

}  // namespace dicebench::engine
