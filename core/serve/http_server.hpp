// A small HTTP/1.1 server on Boost.Beast (no HTTP parsing of our own): one thread per connection,
// keep-alive, capped connections (answered 503 beyond), capped headers and bodies (413), read and
// write timeouts, and a stop that lets requests in progress finish while idle connections close.
#pragma once

#include "core/base/result.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace dicebench::serve {

struct HttpRequest {
  std::string method;  // GET, POST, ...
  std::string target;  // the path and query
  std::string body;
  std::string authorization;  // the Authorization header ("" when absent)
};

struct HttpResponse {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;  // e.g. Retry-After
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

struct HttpSettings {
  std::string address = "127.0.0.1";
  std::uint16_t port = 8000;  // 0: one the system picks (port() says which)
  std::size_t max_body_bytes = 64u << 20;
  std::size_t max_connections = 256;
  int idle_timeout_s = 120;  // a connection that sends nothing this long is closed
};

class HttpServer {
 public:
  // Binds and listens; an error (io) naming the address for one that cannot be bound.
  static Result<std::unique_ptr<HttpServer>> listen(const HttpSettings& settings, HttpHandler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  std::uint16_t port() const;
  // Accepts connections until `stopping` says so, then stops accepting, closes idle connections
  // and returns once every request in progress has been answered.
  void serve(const std::function<bool()>& stopping);

  struct State;  // defined in http_server.cpp

 private:
  explicit HttpServer(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace dicebench::serve
