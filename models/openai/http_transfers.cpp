// Concurrent HTTP requests with retries, on libcurl's multi interface.
#include "models/openai/http_transfers.hpp"

#include "models/openai/chat_completion.hpp"
#include "models/openai/event_stream.hpp"

#include <curl/curl.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <deque>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <thread>

namespace dicebench::openai {
namespace {

using Clock = std::chrono::steady_clock;

// One request's state across its attempts.
struct Transfer {
  size_t index = 0;
  int attempts = 0;
  Clock::time_point not_before{};
  std::optional<Clock::time_point> first_failure;  // when its first failed attempt ended
  Clock::time_point last_activity{};               // when its attempt started or last received anything
  CURL* easy = nullptr;
  std::string body;
  std::string content_type;
  std::optional<double> retry_after_s;
  char error[CURL_ERROR_SIZE] = {};
};

size_t on_body(char* data, size_t size, size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  transfer->body.append(data, size * count);
  transfer->last_activity = Clock::now();
  return size * count;
}

bool starts_with_name(std::string_view line, std::string_view name) {
  if (line.size() <= name.size()) return false;
  for (size_t i = 0; i < name.size(); ++i)
    if (static_cast<char>(std::tolower(static_cast<unsigned char>(line[i]))) != name[i]) return false;
  return true;
}

// Keeps Retry-After and Content-Type only; every other header of the reply is dropped.
size_t on_header(char* data, size_t size, size_t count, void* user) {
  const std::string_view line(data, size * count);
  auto* transfer = static_cast<Transfer*>(user);
  transfer->last_activity = Clock::now();
  if (starts_with_name(line, "content-type:")) transfer->content_type = std::string(line.substr(13));
  constexpr std::string_view kName = "retry-after:";
  if (starts_with_name(line, kName)) {
    const std::string_view value = line.substr(kName.size());
    transfer->retry_after_s = parse_retry_after_seconds(value);
    if (!transfer->retry_after_s) {  // an HTTP date
      const std::string text(value);
      const time_t when = curl_getdate(text.c_str(), nullptr);
      if (when > 0) transfer->retry_after_s = std::max(0.0, static_cast<double>(when - time(nullptr)));
    }
  }
  return size * count;
}

// Whether the server of `url` refuses connections now (a connection only, within 2 s; no request).
bool refuses_connections(const std::string& url) {
  CURL* easy = curl_easy_init();
  if (!easy) return false;
  curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
  curl_easy_setopt(easy, CURLOPT_CONNECT_ONLY, 1L);
  curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, 2000L);
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  const CURLcode code = curl_easy_perform(easy);
  curl_easy_cleanup(easy);
  return code == CURLE_COULDNT_CONNECT;
}

struct MultiDeleter {
  void operator()(CURLM* multi) const { curl_multi_cleanup(multi); }
};
struct HeaderListDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};

}  // namespace

std::string seconds_text(double seconds) {
  std::string text = std::to_string(seconds);
  text.erase(text.find_last_not_of('0') + 1);
  if (!text.empty() && text.back() == '.') text.pop_back();
  return text;
}

std::string duration_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", seconds);
  return text;
}

bool send_all(const std::vector<HttpRequest>& requests, const TransferSettings& settings,
              const std::function<bool()>& cancelled, const std::function<void(size_t, HttpReply&&)>& on_reply,
              const std::function<bool()>& stop_starting) {
  static const CURLcode global = curl_global_init(CURL_GLOBAL_DEFAULT);
  if (global != CURLE_OK) throw std::runtime_error(std::string("libcurl cannot start: ") + curl_easy_strerror(global));
  std::unique_ptr<CURLM, MultiDeleter> multi(curl_multi_init());
  std::unique_ptr<curl_slist, HeaderListDeleter> headers;
  for (const std::string& header : settings.headers)
    headers.reset(curl_slist_append(headers.release(), header.c_str()));
  headers.reset(curl_slist_append(headers.release(), "Content-Type: application/json"));
  headers.reset(curl_slist_append(headers.release(), "Expect:"));

  std::deque<Transfer> transfers(requests.size());
  std::deque<Transfer*> waiting;  // not in flight: new, or due for a retry at not_before
  for (size_t i = 0; i < requests.size(); ++i) {
    transfers[i].index = i;
    waiting.push_back(&transfers[i]);
  }
  std::mt19937_64 random{std::random_device{}()};
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  size_t in_flight = 0;
  const auto idle = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(settings.idle_timeout_s));

  const auto start = [&](Transfer& t) {
    const HttpRequest& request = requests[t.index];
    t.easy = curl_easy_init();
    if (!t.easy) throw std::runtime_error("libcurl cannot make a request handle");
    t.body.clear();
    t.content_type.clear();
    t.retry_after_s.reset();
    t.error[0] = '\0';
    ++t.attempts;
    curl_easy_setopt(t.easy, CURLOPT_URL, request.url.c_str());
    curl_easy_setopt(t.easy, CURLOPT_HTTPHEADER, headers.get());
    if (!request.body.empty()) {
      curl_easy_setopt(t.easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
      curl_easy_setopt(t.easy, CURLOPT_POSTFIELDS, request.body.data());
    }
    curl_easy_setopt(t.easy, CURLOPT_WRITEFUNCTION, &on_body);
    curl_easy_setopt(t.easy, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(t.easy, CURLOPT_HEADERFUNCTION, &on_header);
    curl_easy_setopt(t.easy, CURLOPT_HEADERDATA, &t);
    curl_easy_setopt(t.easy, CURLOPT_ERRORBUFFER, t.error);
    if (settings.timeout_s) curl_easy_setopt(t.easy, CURLOPT_TIMEOUT_MS, static_cast<long>(*settings.timeout_s * 1000));
    t.last_activity = Clock::now();  // the idle timeout counts from here, and from each byte received
    const double connect_s =
        std::min(settings.connect_timeout_s, settings.timeout_s.value_or(settings.connect_timeout_s));
    curl_easy_setopt(t.easy, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(connect_s * 1000));
    curl_easy_setopt(t.easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(t.easy, CURLOPT_PRIVATE, &t);
    curl_easy_setopt(t.easy, CURLOPT_ACCEPT_ENCODING, "");
    curl_multi_add_handle(multi.get(), t.easy);
    ++in_flight;
  };
  const auto abandon_in_flight = [&] {
    for (Transfer& t : transfers)
      if (t.easy) {
        curl_multi_remove_handle(multi.get(), t.easy);
        curl_easy_cleanup(t.easy);
        t.easy = nullptr;
      }
    in_flight = 0;
  };

  // When an attempt or a probe last found the server refusing connections. A server that refuses
  // new ones is gone or going down: a reply in flight that has been silent meanwhile is given up (and
  // retried) rather than held for idle_timeout_s, as vLLM, shutting down, waits for open connections
  // to close. A reply silent for kSilent gets its server probed (a connection, no request) at most
  // once every kSilent.
  std::optional<Clock::time_point> last_refused, last_probe;
  constexpr auto kSilent = std::chrono::seconds(10);
  size_t finished = 0;
  // The retries since the last line about them: whether any, the last failure, and when the last
  // line was written.
  bool wave_retries = false;
  std::string wave_failure;
  std::optional<Clock::time_point> wave_said;
  const auto say_wave = [&](Clock::time_point now) {
    const auto spacing = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(kRetryWaveSeconds));
    if (!wave_retries || (wave_said && now - *wave_said < spacing)) return;
    double oldest = 0;
    size_t retrying = 0;
    for (const Transfer* t : waiting)
      if (t->first_failure) {
        ++retrying;
        oldest = std::max(oldest, std::chrono::duration<double>(now - *t->first_failure).count());
      }
    if (!retrying) return;  // retried already, and answered
    std::string left = settings.retry_window_s > 0
                           ? "up to " + duration_text(std::max(0.0, settings.retry_window_s - oldest)) +
                                 " s more (openai.retry_window_s = " + seconds_text(settings.retry_window_s) + " s)"
                           : "without a window (openai.retry_window_s = 0)";
    if (settings.max_retries)
      left += ", " + std::to_string(*settings.max_retries) + (*settings.max_retries == 1 ? " retry" : " retries") +
              " at most (openai.max_retries)";
    settings.log_retries("openai: retrying " + std::to_string(retrying) + " request(s) after: " + wave_failure +
                         "; the oldest has been retried for " + duration_text(oldest) + " s and goes on " + left);
    wave_retries = false;
    wave_said = now;
  };
  std::optional<Clock::time_point> cancel_deadline;  // set once cancelled: the grace for replies in flight
  bool stopping = false;                             // stop_starting said so: drain what is in flight
  // Ends a transfer's attempt (status 0: no reply, `transport_error` says why): retried, or final.
  const auto end_attempt = [&](Transfer& t, long status, std::string transport_error) {
    double seconds = 0;
    curl_easy_getinfo(t.easy, CURLINFO_TOTAL_TIME, &seconds);
    curl_multi_remove_handle(multi.get(), t.easy);
    curl_easy_cleanup(t.easy);
    t.easy = nullptr;
    --in_flight;
    // A streamed reply is read back into one body; one cut before its end came is no reply.
    bool streamed = false;
    if (status >= 200 && status < 300 && is_event_stream(t.content_type)) {
      // The transfer ended cleanly here: complete with [DONE], or with every choice's finish_reason.
      AssembledStream assembled = assemble_event_stream(t.body);
      streamed = true;
      if (assembled.complete) {
        t.body = std::move(assembled.body);
      } else {
        status = 0;
        transport_error = "the reply stream ended before its end (no data: [DONE], and a choice not finished)";
      }
    }
    // A reply the server aborted (vLLM shutting down ends what is in flight so) is no answer either.
    if (status >= 200 && status < 300 && has_aborted_choice(t.body)) {
      status = 0;
      transport_error = "the server aborted the reply (finish_reason \"abort\")";
    }
    const AttemptEnd end{status, t.retry_after_s};
    if (worth_retrying(end) && !cancel_deadline && !stopping) {
      const auto ended = Clock::now();
      if (!t.first_failure) t.first_failure = ended;
      const double delay = retry_delay_s(t.attempts, end, settings.backoff, unit(random));
      const double since = std::chrono::duration<double>(ended - *t.first_failure).count();
      const bool retries_left = !settings.max_retries || t.attempts <= *settings.max_retries;
      if (retries_left && within_retry_window(since, delay, settings.retry_window_s)) {
        t.not_before = ended + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(delay));
        waiting.push_back(&t);
        if (settings.log_retries) {
          wave_retries = true;
          wave_failure = status ? "HTTP " + std::to_string(status) : "no reply: " + transport_error;
          say_wave(ended);
        }
        return;
      }
    }
    HttpReply reply;
    if (t.first_failure) reply.retried_s = std::chrono::duration<double>(Clock::now() - *t.first_failure).count();
    reply.status = status;
    reply.body = std::move(t.body);
    reply.seconds = seconds;
    reply.attempts = t.attempts;
    reply.streamed = streamed;
    reply.transport_error = std::move(transport_error);
    ++finished;
    on_reply(t.index, std::move(reply));
  };
  while (finished < requests.size()) {
    if (!cancel_deadline && cancelled()) {
      cancel_deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(settings.cancel_grace_s));
      waiting.clear();
    }
    if (cancel_deadline && (in_flight == 0 || Clock::now() >= *cancel_deadline)) {
      abandon_in_flight();
      return false;
    }
    if (!stopping && stop_starting && stop_starting()) {
      stopping = true;
      waiting.clear();
    }
    if (stopping && in_flight == 0) return true;
    // Fill free slots with whatever is due, in order.
    const auto now = Clock::now();
    Clock::time_point next_due = Clock::time_point::max();
    for (auto it = waiting.begin(); it != waiting.end() && in_flight < settings.concurrency;) {
      if ((*it)->not_before <= now) {
        start(**it);
        it = waiting.erase(it);
      } else {
        next_due = std::min(next_due, (*it)->not_before);
        ++it;
      }
    }
    int running = 0;
    curl_multi_perform(multi.get(), &running);
    int queued = 0;
    while (CURLMsg* message = curl_multi_info_read(multi.get(), &queued)) {
      if (message->msg != CURLMSG_DONE) continue;
      Transfer* t = nullptr;
      curl_easy_getinfo(message->easy_handle, CURLINFO_PRIVATE, reinterpret_cast<char**>(&t));
      const CURLcode code = message->data.result;
      long status = 0;
      if (code == CURLE_OK) curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
      if (code == CURLE_COULDNT_CONNECT) last_refused = Clock::now();
      end_attempt(*t, status, code == CURLE_OK ? "" : (t->error[0] ? std::string(t->error) : curl_easy_strerror(code)));
    }
    // The idle timeout: an attempt that has received nothing for idle_timeout_s is given up.
    const auto checked = Clock::now();
    for (const Transfer& t : transfers)
      if (t.easy && checked - t.last_activity > kSilent && (!last_probe || checked - *last_probe > kSilent)) {
        last_probe = checked;
        if (refuses_connections(requests[t.index].url)) last_refused = Clock::now();
      }
    const bool refusing = last_refused && checked - *last_refused < 2 * kSilent;
    for (Transfer& t : transfers) {
      if (!t.easy) continue;
      if (checked - t.last_activity > idle)
        end_attempt(t, 0,
                    "nothing arrived for " + seconds_text(settings.idle_timeout_s) + " s (openai.idle_timeout_s)");
      else if (refusing && checked - t.last_activity > kSilent)
        end_attempt(t, 0, "the reply went silent while the server refuses new connections (going down?)");
    }
    say_wave(Clock::now());
    if (finished == requests.size()) break;
    // Wait for traffic, a retry falling due, or 100 ms (to notice a cancel).
    int wait_ms = 100;
    if (next_due != Clock::time_point::max())
      wait_ms = static_cast<int>(std::clamp<long long>(
          std::chrono::duration_cast<std::chrono::milliseconds>(next_due - Clock::now()).count(), 0, 100));
    if (in_flight > 0)
      curl_multi_poll(multi.get(), nullptr, 0, wait_ms, nullptr);
    else if (wait_ms > 0 && waiting.size() > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
  }
  return !cancel_deadline;
}

}  // namespace dicebench::openai
