// Host logging to stderr with levels, aware of the live progress line so the two never mix.
#pragma once

#include <fmt/format.h>

#include <string_view>

namespace dicebench::host {

enum class LogLevel { debug = 0, info = 1, warn = 2, error = 3 };

void set_log_level(LogLevel level);
LogLevel log_level();
void log_message(LogLevel level, std::string_view message);

// Called by the progress line: `redraw` repaints it after a log line has been written.
void set_status_line_hooks(void (*clear)(), void (*redraw)());

template <class... Args>
void log_info(fmt::format_string<Args...> format, Args&&... args) {
  log_message(LogLevel::info, fmt::format(format, std::forward<Args>(args)...));
}
template <class... Args>
void log_warn(fmt::format_string<Args...> format, Args&&... args) {
  log_message(LogLevel::warn, fmt::format(format, std::forward<Args>(args)...));
}
template <class... Args>
void log_debug(fmt::format_string<Args...> format, Args&&... args) {
  if (log_level() <= LogLevel::debug) log_message(LogLevel::debug, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace dicebench::host
