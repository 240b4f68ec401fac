// Host logging to stderr with levels, aware of the live progress line.
#include "core/host/log.hpp"

#include <cstdio>
#include <mutex>

namespace dicebench::host {
namespace {
LogLevel g_level = LogLevel::info;
std::mutex g_mutex;
void (*g_clear)() = nullptr;
void (*g_redraw)() = nullptr;

const char* prefix(LogLevel level) {
  switch (level) {
    case LogLevel::debug:
      return "debug: ";
    case LogLevel::info:
      return "";
    case LogLevel::warn:
      return "warning: ";
    case LogLevel::error:
      return "error: ";
  }
  return "";
}
}  // namespace

void set_log_level(LogLevel level) { g_level = level; }
LogLevel log_level() { return g_level; }

void set_status_line_hooks(void (*clear)(), void (*redraw)()) {
  std::lock_guard lock(g_mutex);
  g_clear = clear;
  g_redraw = redraw;
}

void log_message(LogLevel level, std::string_view message) {
  if (level < g_level) return;
  std::lock_guard lock(g_mutex);
  if (g_clear) g_clear();
  std::fprintf(stderr, "%s%.*s\n", prefix(level), static_cast<int>(message.size()), message.data());
  if (g_redraw) g_redraw();
  std::fflush(stderr);
}

}  // namespace dicebench::host
