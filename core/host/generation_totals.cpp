// Totals over a run's generation statistics.
#include "core/host/generation_totals.hpp"

#include <dicebench/generation_stats.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace dicebench::host {
namespace {

int64_t integer_at(const nlohmann::json& json, std::string_view key) {
  const auto it = json.find(std::string(key));
  return it != json.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

}  // namespace

void GenerationTotals::add(std::string_view stats_json) {
  const nlohmann::json json = nlohmann::json::parse(stats_json, nullptr, false);
  if (!json.is_object()) return;
  const auto flag = json.find(std::string(stats::kCached));
  const bool cached = flag != json.end() && flag->is_boolean() && flag->get<bool>();
  if (cached) ++this->cached;
  if (json.contains(std::string(stats::kError))) ++failed;
  if (json.contains(std::string(stats::kCompletionTokens))) {
    ++with_tokens;
    prompt_tokens += integer_at(json, stats::kPromptTokens);
    const int64_t completion = integer_at(json, stats::kCompletionTokens);
    completion_tokens += completion;
    if (!cached) generated_tokens += completion;
  }
}

std::string GenerationTotals::summary(double seconds) const {
  if (!with_tokens && !cached && !failed) return "";
  std::string out;
  if (with_tokens && generated_tokens > 0)
    out += fmt::format("  tokens: {} prompt, {} completion; {:.1f} completion tokens/s generated ({} in {:.1f} s)\n",
                       prompt_tokens, completion_tokens,
                       seconds > 0 ? static_cast<double>(generated_tokens) / seconds : 0.0, generated_tokens, seconds);
  else if (with_tokens)
    out += fmt::format("  tokens: {} prompt, {} completion; none generated now\n", prompt_tokens, completion_tokens);
  if (cached) out += fmt::format("  request cache: {} answer(s) read back, not requested again\n", cached);
  if (failed)
    out += fmt::format(
        "  failed requests: {} (stored with empty completions; the reason is in samples.gen_stats '$.{}')\n", failed,
        stats::kError);
  return out;
}

}  // namespace dicebench::host
