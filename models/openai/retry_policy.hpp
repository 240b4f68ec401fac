// When a request is sent again and after how long: exponential backoff with jitter on 429, 5xx,
// timeouts and dropped connections, honouring the server's Retry-After. Pure, so unit-tested.
#pragma once

#include <optional>
#include <string_view>

namespace dicebench::openai {

// What one attempt ended with: an HTTP status (0 when no reply came: refused, dropped, timed out).
struct AttemptEnd {
  long status = 0;
  std::optional<double> retry_after_s;  // the server's Retry-After, in seconds
};

// 408, 429, any 5xx and no reply at all are worth another attempt; other statuses are final.
bool worth_retrying(const AttemptEnd& end);

struct Backoff {
  double base_s = 0.5;  // the first delay (before jitter)
  double max_s = 10;    // delays never grow beyond this (a Retry-After may ask for longer, up to 10 minutes)
};

// Whether a retry `delay_s` from now still falls within the retry window: `window_s` after the
// request's first failed attempt ended, `since_first_failure_s` ago.
bool within_retry_window(double since_first_failure_s, double delay_s, double window_s);

// The delay before retry number `retry` (1 for the first retry): the server's Retry-After when
// it gave one, else base * 2^(retry-1) capped at max, scaled by a jitter in [0.5, 1) from `unit`
// (a uniform draw in [0, 1)).
double retry_delay_s(int retry, const AttemptEnd& end, const Backoff& backoff, double unit);

// Retry-After's value in seconds: delta-seconds ("2", "0.5"); nullopt for anything else (an
// HTTP date is read by the caller, which has a clock).
std::optional<double> parse_retry_after_seconds(std::string_view value);

}  // namespace dicebench::openai
