// Helpers for calling through a plugin's C tables: collecting sink output and turning a status
// plus error buffer into a Result.
#pragma once

#include "core/base/result.hpp"

#include <dicebench/plugin.h>
#include <fmt/format.h>

#include <cstddef>
#include <string>
#include <string_view>

// Whether a plugin's table, sized as its builder compiled it, holds `field` (a later minor's).
#define DICEBENCH_TABLE_HOLDS(table, type, field) \
  ((table)->struct_size >= offsetof(type, field) + sizeof((table)->field))

namespace dicebench::host {

inline void append_to_string(void* user, dicebench_str text) {
  if (text.data) static_cast<std::string*>(user)->append(text.data, text.size);
}

inline std::string str_of(dicebench_str s) { return s.data ? std::string(s.data, s.size) : std::string(); }

// The plugin's one-line message; names the plugin file when the plugin gave no reason.
// DICEBENCH_CANCELLED is ErrorKind::cancelled (the host asked it to stop), or, when the plugin gave
// a reason, ErrorKind::model_stopped with that reason: the model cannot go on now (its server
// stopped answering).
inline Error plugin_error(const std::string& plugin_path, const char* call, dicebench_status status,
                          const dicebench_error& error) {
  if (status == DICEBENCH_CANCELLED) {
    const std::string reason(error.message);
    if (reason.empty() || reason == "cancelled") return make_error(ErrorKind::cancelled, "cancelled");
    return make_error(ErrorKind::model_stopped, reason);
  }
  if (error.message[0]) return make_error(std::string(error.message));
  return make_error(fmt::format("{}: {} failed without saying why", plugin_path, call));
}

}  // namespace dicebench::host
