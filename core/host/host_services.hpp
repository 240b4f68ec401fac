// The services table the host hands to every plugin: logging, configuration lookup and
// cancellation (set by the first Ctrl-C; a second one ends the process at once).
#pragma once

#include "core/host/config.hpp"

#include <dicebench/plugin.h>

#include <atomic>

namespace dicebench::host {

class HostServices {
 public:
  explicit HostServices(const Config& config);
  HostServices(const HostServices&) = delete;
  HostServices& operator=(const HostServices&) = delete;

  const dicebench_host_services* table() const { return &table_; }

  // Installs SIGINT/SIGTERM handlers that request cancellation.
  static void install_signal_handlers();
  static bool cancel_requested();
  static void request_cancel();

 private:
  const Config& config_;
  dicebench_host_services table_{};
};

}  // namespace dicebench::host
