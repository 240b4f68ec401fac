// The services table the host hands to every plugin: logging, configuration lookup (which notes the
// keys asked for: a setting in a plugin's section that the plugin never asks for is a typo) and
// cancellation (set by the first Ctrl-C; a second one ends the process at once).
#pragma once

#include "core/host/config.hpp"

#include <dicebench/plugin.h>

#include <atomic>
#include <mutex>
#include <set>
#include <string>

namespace dicebench::host {

class HostServices {
 public:
  explicit HostServices(const Config& config);
  HostServices(const HostServices&) = delete;
  HostServices& operator=(const HostServices&) = delete;

  const dicebench_host_services* table() const { return &table_; }
  // Every key a plugin has looked up through this table so far, set or not.
  std::set<std::string> asked() const;

  // Installs SIGINT/SIGTERM handlers that request cancellation.
  static void install_signal_handlers();
  static bool cancel_requested();
  static void request_cancel();

 private:
  static int config_get(void* host, dicebench_str key, dicebench_str* value);

  const Config& config_;
  dicebench_host_services table_{};
  mutable std::mutex asked_mutex_;
  std::set<std::string> asked_;
};

}  // namespace dicebench::host
