// Sending many HTTP requests at once with libcurl's multi interface: at most `concurrency` in
// flight, each retried per retry_policy.hpp within a retry window, each final reply handed back as
// it arrives, on the calling thread. A streamed reply (server-sent events) is read back into one
// body (event_stream.hpp). Headers (the API key's) are never logged or kept in a reply.
#pragma once

#include "models/openai/retry_policy.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace dicebench::openai {

struct HttpRequest {
  std::string url;
  std::string body;  // empty: GET, else POST with this JSON body
};

struct HttpReply {
  long status = 0;   // 0: no (complete) reply came; transport_error says why
  std::string body;  // a streamed reply comes back assembled into one body
  std::string transport_error;
  double seconds = 0;  // the last attempt's duration
  int attempts = 0;
  double retried_s = 0;   // from the end of its first failed attempt to this final one (0: no retry)
  bool streamed = false;  // the reply came as server-sent events
};

struct TransferSettings {
  size_t concurrency = 8;
  std::optional<double> timeout_s;  // a limit on one whole attempt; none: only the idle timeout
  double idle_timeout_s = 300;      // an attempt that receives nothing for this long is abandoned (after 10 s
                                    // only, while the server refuses new connections: it is going down)
  double connect_timeout_s = 30;
  // Retries (retry_policy.hpp's worth_retrying) go on until this long after a request's first
  // failed attempt ended, or until max_retries retries, whichever comes first.
  double retry_window_s = 180;
  std::optional<int> max_retries;
  Backoff backoff;
  double cancel_grace_s = 2;         // once cancelled, how long replies in flight may still arrive
  std::vector<std::string> headers;  // "Name: value", sent with every request
  // Where set, told of the retries in one line when the first is scheduled, then at most once every
  // kRetryWaveSeconds while more are: how many requests wait for a retry, the last failure, how long
  // the oldest has been retried and how much longer its window lets it go on.
  std::function<void(const std::string&)> log_retries;
};

inline constexpr double kRetryWaveSeconds = 10;

// A setting's seconds as written: "2" for 2.0, "0.5" for 0.5.
std::string seconds_text(double seconds);
// A measured duration in seconds, to a tenth: "2.9".
std::string duration_text(double seconds);

// Sends every request and calls on_reply(index, reply) once for each, as it becomes final.
// `stop_starting` (optional) is polled too: once it says stop, nothing new is started or retried,
// what is in flight still finishes and is handed back, and the call returns true; requests that
// were never finished get no on_reply. Once `cancelled` says stop, replies in flight get
// cancel_grace_s to arrive (handed back too), then the rest are abandoned and it returns false.
bool send_all(const std::vector<HttpRequest>& requests, const TransferSettings& settings,
              const std::function<bool()>& cancelled, const std::function<void(size_t, HttpReply&&)>& on_reply,
              const std::function<bool()>& stop_starting = {});

}  // namespace dicebench::openai
