// Helpers for calling through a plugin's C tables: collecting sink output and turning a status
// plus error buffer into a Result.
#pragma once

#include "core/base/result.hpp"

#include <dicebench/plugin.h>
#include <fmt/format.h>

#include <string>

namespace dicebench::host {

inline void append_to_string(void* user, dicebench_str text) {
  if (text.data) static_cast<std::string*>(user)->append(text.data, text.size);
}

inline std::string str_of(dicebench_str s) { return s.data ? std::string(s.data, s.size) : std::string(); }

// The plugin's one-line message; names the plugin file when the plugin gave no reason.
inline Error plugin_error(const std::string& plugin_path, const char* call, dicebench_status status,
                          const dicebench_error& error) {
  if (status == DICEBENCH_CANCELLED) return make_error("cancelled");
  if (error.message[0]) return make_error(std::string(error.message));
  return make_error(fmt::format("{}: {} failed without saying why", plugin_path, call));
}

}  // namespace dicebench::host
