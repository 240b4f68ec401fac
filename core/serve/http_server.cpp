// The HTTP server (http_server.hpp) on Boost.Beast's synchronous API.
#include "core/serve/http_server.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

namespace dicebench::serve {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

struct HttpServer::State {
  HttpSettings settings;
  HttpHandler handler;
  net::io_context io;
  tcp::acceptor acceptor{io};
  std::mutex mutex;
  std::condition_variable ended;                       // a connection ended
  std::map<std::uint64_t, std::pair<int, bool>> open;  // by connection: its socket and whether a request is in progress
  std::uint64_t next_connection = 0;
  bool stopping = false;
};

namespace {

void set_timeouts(int fd, int seconds) {
  timeval tv{seconds, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

http::response<http::string_body> to_beast(const HttpResponse& response, unsigned version, bool keep_alive) {
  http::response<http::string_body> out{static_cast<http::status>(response.status), version};
  out.set(http::field::server, "dicebench");
  out.set(http::field::content_type, response.content_type);
  for (const auto& [name, value] : response.headers) out.set(name, value);
  out.keep_alive(keep_alive);
  out.body() = response.body;
  out.prepare_payload();
  return out;
}

HttpResponse error_response(int status, const std::string& message) {
  return {status, fmt::format("{{\"error\": \"{}\"}}\n", message), "application/json", {}};
}

// One connection's requests, answered in order until it closes, idles out or the server stops.
void serve_connection(HttpServer::State& state, tcp::socket socket, std::uint64_t id) {
  const int fd = socket.native_handle();
  set_timeouts(fd, state.settings.idle_timeout_s);
  beast::flat_buffer buffer;
  const auto set_busy = [&](bool busy) {
    std::lock_guard guard(state.mutex);
    state.open[id].second = busy;
    return !state.stopping;
  };
  while (true) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(state.settings.max_body_bytes);
    parser.header_limit(64 * 1024);
    beast::error_code ec;
    http::read(socket, buffer, parser, ec);
    if (ec == http::error::body_limit || ec == http::error::header_limit) {
      const auto response = error_response(
          413, fmt::format("the request is larger than this server takes ({} bytes)", state.settings.max_body_bytes));
      http::write(socket, to_beast(response, 11, false), ec);
      break;
    }
    if (ec) break;  // closed, idle too long, or not HTTP
    const bool open = set_busy(true);
    const auto& request = parser.get();
    HttpRequest in{std::string(request.method_string()), std::string(request.target()), request.body(),
                   std::string(request[http::field::authorization])};
    HttpResponse response;
    try {
      response = state.handler(in);
    } catch (const std::exception& error) {  // the handler's own bug: this request fails, not the server
      response = error_response(500, "internal error");
    }
    const bool keep_alive = request.keep_alive() && open;
    http::write(socket, to_beast(response, request.version(), keep_alive), ec);
    if (!set_busy(false) || ec || !keep_alive) break;
  }
  beast::error_code ignored;
  socket.shutdown(tcp::socket::shutdown_both, ignored);
  socket.close(ignored);
}

}  // namespace

HttpServer::HttpServer(std::unique_ptr<State> state) : state_(std::move(state)) {}
HttpServer::~HttpServer() = default;

Result<std::unique_ptr<HttpServer>> HttpServer::listen(const HttpSettings& settings, HttpHandler handler) {
  auto state = std::make_unique<State>();
  state->settings = settings;
  state->handler = std::move(handler);
  beast::error_code ec;
  const auto address = net::ip::make_address(settings.address, ec);
  if (ec)
    return make_error(ErrorKind::bad_input, fmt::format("{} is not an IP address to listen on", settings.address));
  const tcp::endpoint endpoint{address, settings.port};
  auto& acceptor = state->acceptor;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (!ec) acceptor.non_blocking(true, ec);
  if (ec)
    return make_error(ErrorKind::io,
                      fmt::format("cannot listen on {}:{}: {}", settings.address, settings.port, ec.message()));
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(state)));
}

std::uint16_t HttpServer::port() const { return state_->acceptor.local_endpoint().port(); }

void HttpServer::serve(const std::function<bool()>& stopping) {
  State& state = *state_;
  while (!stopping()) {
    pollfd ready{state.acceptor.native_handle(), POLLIN, 0};
    if (::poll(&ready, 1, 200) <= 0) continue;
    beast::error_code ec;
    tcp::socket socket(state.io);
    state.acceptor.accept(socket, ec);
    if (ec) continue;
    socket.non_blocking(false, ec);
    std::unique_lock lock(state.mutex);
    if (state.open.size() >= state.settings.max_connections) {
      lock.unlock();
      set_timeouts(socket.native_handle(), 2);
      auto busy = error_response(503, "too many connections; try again");
      busy.headers.emplace_back("Retry-After", "1");
      http::write(socket, to_beast(busy, 11, false), ec);
      continue;
    }
    const std::uint64_t id = state.next_connection++;
    state.open[id] = {socket.native_handle(), false};
    std::thread([&state, id, s = std::move(socket)]() mutable {
      serve_connection(state, std::move(s), id);
      std::lock_guard guard(state.mutex);
      state.open.erase(id);
      state.ended.notify_all();
    }).detach();
  }
  beast::error_code ignored;
  state.acceptor.close(ignored);
  std::unique_lock lock(state.mutex);
  state.stopping = true;
  // Idle connections wake from their read and end; requests in progress are answered first.
  while (!state.open.empty()) {
    for (const auto& [id, connection] : state.open)
      if (!connection.second) ::shutdown(connection.first, SHUT_RD);
    state.ended.wait_for(lock, std::chrono::milliseconds(200));
  }
}

}  // namespace dicebench::serve
