// Thin C++ helpers for writing a dicebench plugin against the C ABI in plugin.h:
// string conversion, config lookup, logging, and a guard that turns exceptions into a
// status + one-line error so that none crosses the boundary. Header-only; the plugin links
// nothing of the host.
#pragma once

#include <dicebench/plugin.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#if defined(__GNUC__)
#define DICEBENCH_EXPORT extern "C" __attribute__((visibility("default")))
#else
#define DICEBENCH_EXPORT extern "C"
#endif

// Defines the one exported entry symbol, returning `descriptor` (a static object).
#define DICEBENCH_PLUGIN_ENTRY(descriptor) \
  DICEBENCH_EXPORT const dicebench_plugin_descriptor* dicebench_plugin_entry(void) { return &(descriptor); }

namespace dicebench::sdk {

constexpr dicebench_str str(std::string_view s) { return dicebench_str{s.data(), s.size()}; }
inline std::string_view view(dicebench_str s) { return s.data ? std::string_view(s.data, s.size) : std::string_view(); }

// What a plugin's entry returns, at the ABI version it is built against: its kind, own name,
// version, build id (git sha, options), the names it provides, its api table and, for a suite, the
// command-line flags it declares (dicebench_option; none by default).
constexpr dicebench_plugin_descriptor descriptor(dicebench_kind kind, std::string_view name, std::string_view version,
                                                 std::string_view build_id,
                                                 std::span<const dicebench_provided_name> provides, const void* api,
                                                 std::span<const dicebench_option> options = {}) {
  return {DICEBENCH_ABI_MAJOR,
          DICEBENCH_ABI_MINOR,
          sizeof(dicebench_plugin_descriptor),
          kind,
          str(name),
          str(version),
          str(build_id),
          provides.data(),
          provides.size(),
          api,
          options.empty() ? nullptr : options.data(),
          options.size()};
}

inline void set_error(dicebench_error* error, std::string_view message) {
  if (!error) return;
  const size_t n = std::min(message.size(), sizeof(error->message) - 1);
  std::memcpy(error->message, message.data(), n);
  error->message[n] = '\0';
}

// Thrown inside a plugin to report a one-line failure; guard() converts it.
struct Failure : std::exception {
  explicit Failure(std::string m) : message(std::move(m)) {}
  const char* what() const noexcept override { return message.c_str(); }
  std::string message;
};

// Runs `body` (returning dicebench_status); any exception becomes DICEBENCH_FAILED + message.
template <class Body>
dicebench_status guard(dicebench_error* error, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::exception& e) {
    set_error(error, e.what());
  } catch (...) {
    set_error(error, "unknown error inside plugin");
  }
  return DICEBENCH_FAILED;
}

// Convenience view of the host services.
class Host {
 public:
  explicit Host(const dicebench_host_services* services) : services_(services) {}

  std::optional<std::string> config(std::string_view key) const {
    dicebench_str value{};
    if (services_ && services_->config_get && services_->config_get(services_->host, str(key), &value))
      return std::string(view(value));
    return std::nullopt;
  }
  void log(dicebench_log_level level, std::string_view message) const {
    if (services_ && services_->log) services_->log(services_->host, level, str(message));
  }
  bool cancelled() const { return services_ && services_->cancelled && services_->cancelled(services_->host); }

 private:
  const dicebench_host_services* services_;
};

// Sends a std::string through a sink.
inline void emit(dicebench_text_sink sink, void* user, std::string_view text) { sink(user, str(text)); }

}  // namespace dicebench::sdk
