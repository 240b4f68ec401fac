// The services table handed to plugins: logging, configuration lookup, cancellation.
#include "core/host/host_services.hpp"

#include "core/host/log.hpp"

#include <csignal>

namespace dicebench::host {
namespace {

volatile std::sig_atomic_t g_cancel = 0;

void on_signal(int signal_number) {
  if (g_cancel) {
    std::signal(signal_number, SIG_DFL);
    std::raise(signal_number);
    return;
  }
  g_cancel = 1;
}

void service_log(void* /*host*/, dicebench_log_level level, dicebench_str message) {
  const std::string_view text(message.data ? message.data : "", message.data ? message.size : 0);
  switch (level) {
    case DICEBENCH_LOG_DEBUG:
      log_message(LogLevel::debug, text);
      break;
    case DICEBENCH_LOG_INFO:
      log_message(LogLevel::info, text);
      break;
    case DICEBENCH_LOG_WARN:
      log_message(LogLevel::warn, text);
      break;
    default:
      log_message(LogLevel::error, text);
      break;
  }
}

}  // namespace

int HostServices::config_get(void* host, dicebench_str key, dicebench_str* value) {
  auto* services = static_cast<HostServices*>(host);
  const std::string name(key.data ? key.data : "", key.data ? key.size : 0);
  {
    std::lock_guard lock(services->asked_mutex_);
    services->asked_.insert(name);
  }
  const auto& values = services->config_.values();
  auto it = values.find(name);
  if (it == values.end()) return 0;
  *value = dicebench_str{it->second.data(), it->second.size()};
  return 1;
}

namespace {

int service_cancelled(void*) { return g_cancel ? 1 : 0; }

}  // namespace

HostServices::HostServices(const Config& config) : config_(config) {
  table_.struct_size = sizeof(dicebench_host_services);
  table_.abi_major = DICEBENCH_ABI_MAJOR;
  table_.abi_minor = DICEBENCH_ABI_MINOR;
  table_.host = this;
  table_.log = &service_log;
  table_.config_get = &HostServices::config_get;
  table_.cancelled = &service_cancelled;
}

std::set<std::string> HostServices::asked() const {
  std::lock_guard lock(asked_mutex_);
  return asked_;
}

void HostServices::install_signal_handlers() {
  std::signal(SIGINT, &on_signal);
  std::signal(SIGTERM, &on_signal);
}

bool HostServices::cancel_requested() { return g_cancel != 0; }
void HostServices::request_cancel() { g_cancel = 1; }

}  // namespace dicebench::host
