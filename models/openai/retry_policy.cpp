// Backoff and retry decisions for the openai: model's requests.
#include "models/openai/retry_policy.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

namespace dicebench::openai {

bool worth_retrying(const AttemptEnd& end) {
  return end.status == 0 || end.status == 408 || end.status == 429 || end.status >= 500;
}

bool within_retry_window(double since_first_failure_s, double delay_s, double window_s) {
  return since_first_failure_s + delay_s <= window_s;
}

double retry_delay_s(int retry, const AttemptEnd& end, const Backoff& backoff, double unit) {
  constexpr double kLongestRetryAfter = 600;
  if (end.retry_after_s) return std::clamp(*end.retry_after_s, 0.0, kLongestRetryAfter);
  const double exponential = backoff.base_s * std::pow(2.0, std::max(0, retry - 1));
  return std::min(exponential, backoff.max_s) * (0.5 + 0.5 * std::clamp(unit, 0.0, 1.0));
}

std::optional<double> parse_retry_after_seconds(std::string_view value) {
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() &&
         (value.back() == ' ' || value.back() == '\t' || value.back() == '\r' || value.back() == '\n'))
    value.remove_suffix(1);
  if (value.empty()) return std::nullopt;
  const std::string text(value);
  char* end = nullptr;
  const double seconds = std::strtod(text.c_str(), &end);
  if (*end != '\0' || !(seconds >= 0) || !std::isfinite(seconds)) return std::nullopt;
  return seconds;
}

}  // namespace dicebench::openai
