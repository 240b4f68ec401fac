// Run configuration: a TOML file flattened to dotted keys ("kernelbench.root"), with command-line
// flags layered on top. Plugins read their own sections through the host services.
#pragma once

#include "core/base/result.hpp"

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace dicebench::host {

class Config {
 public:
  // Malformed TOML gives "FILE:LINE:COLUMN: message".
  static Result<Config> from_toml_file(const std::string& path);
  static Result<Config> from_toml_string(std::string_view text, const std::string& source_name);

  void set(const std::string& key, std::string value) { values_[key] = std::move(value); }
  // --set's argument: "KEY=VALUE"; anything else is an error naming it.
  Result<void> assign(const std::string& assignment);
  std::optional<std::string> get(const std::string& key) const;
  const std::map<std::string, std::string>& values() const { return values_; }

 private:
  std::map<std::string, std::string> values_;
};

// Top-level keys the host itself reads; everything else must sit in a section ([eval], [kernelbench],
// ...: setting_names.hpp says which).
inline constexpr std::string_view kRunKeys[] = {"model", "model_path", "suite",      "problems", "samples",
                                                "db",    "seed",       "batch_size", "infill"};

}  // namespace dicebench::host
