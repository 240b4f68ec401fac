// Sending many HTTP requests at once with libcurl's multi interface: at most `concurrency` in
// flight, each retried per retry_policy.hpp, each final reply handed back as it arrives, on the
// calling thread. Headers (the API key's) are never logged or kept in a reply.
#pragma once

#include "models/openai/retry_policy.hpp"

#include <functional>
#include <string>
#include <vector>

namespace dicebench::openai {

struct HttpRequest {
  std::string url;
  std::string body;  // empty: GET, else POST with this JSON body
};

struct HttpReply {
  long status = 0;            // 0: no reply came (transport_error says why)
  std::string body;
  std::string transport_error;
  double seconds = 0;         // the last attempt's duration
  int attempts = 0;
};

struct TransferSettings {
  size_t concurrency = 8;
  double timeout_s = 600;
  int max_retries = 6;
  Backoff backoff;
  std::vector<std::string> headers;  // "Name: value", sent with every request
};

// Sends every request and calls on_reply(index, reply) once for each, as it becomes final. Polls
// `cancelled` while waiting; returns false (abandoning what is in flight) once it says stop.
bool send_all(const std::vector<HttpRequest>& requests, const TransferSettings& settings,
              const std::function<bool()>& cancelled, const std::function<void(size_t, HttpReply&&)>& on_reply);

}  // namespace dicebench::openai
