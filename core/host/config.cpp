// Run configuration from TOML files and --set overrides (toml++ is included here, in results/report/gate_rules.cpp and
// in benchmarks/kernelbench/prompt_toml.cpp: each reads its own kind of file, and only these link
// dicebench_tomlplusplus).
#include "core/host/config.hpp"
#include "core/base/one_line.hpp"
#include "core/base/whole_file.hpp"

#include "core/base/text.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <vector>

namespace dicebench::host {
namespace {

std::string location(const std::string& source, const toml::source_region& where) {
  return fmt::format("{}:{}:{}", source, where.begin.line, where.begin.column);
}

Result<std::string> scalar_text(const toml::node& node, const std::string& source, const std::string& key) {
  if (auto v = node.as_string()) return std::string(v->get());
  if (auto v = node.as_integer()) return std::to_string(v->get());
  if (auto v = node.as_floating_point()) return fmt::format("{}", v->get());
  if (auto v = node.as_boolean()) return std::string(v->get() ? "true" : "false");
  if (auto array = node.as_array()) {
    std::vector<std::string> parts;
    for (const auto& item : *array) {
      if (item.is_array() || item.is_table())
        return make_error(ErrorKind::bad_input, fmt::format("{}: '{}' must be a list of plain values",
                                                            location(source, item.source()), on_one_line(key)));
      auto text = scalar_text(item, source, key);
      if (!text) return text.error();
      parts.push_back(*text);
    }
    return join(parts, ",");
  }
  return make_error(ErrorKind::bad_input,
                    fmt::format("{}: '{}' has an unsupported type (dates and times are not settings)",
                                location(source, node.source()), on_one_line(key)));
}

Result<void> flatten(const toml::table& table, const std::string& prefix, const std::string& source,
                     std::map<std::string, std::string>& out) {
  for (const auto& [name, node] : table) {
    const std::string key = prefix.empty() ? std::string(name.str()) : prefix + "." + std::string(name.str());
    if (const auto* sub = node.as_table()) {
      DICEBENCH_TRY(flatten(*sub, key, source, out));
      continue;
    }
    if (prefix.empty()) {
      const bool known = std::find(std::begin(kRunKeys), std::end(kRunKeys), key) != std::end(kRunKeys);
      if (!known) {
        std::vector<std::string> names(std::begin(kRunKeys), std::end(kRunKeys));
        std::string hint = did_you_mean(key, names);
        return make_error(
            ErrorKind::bad_input,
            fmt::format("{}: unknown setting '{}'{}; plugin settings go in a section such as [kernelbench]",
                        location(source, name.source()), on_one_line(key), hint.empty() ? "" : " (" + hint + ")"));
      }
    }
    auto text = scalar_text(node, source, key);
    if (!text) return text.error();
    out[key] = std::move(*text);
  }
  return {};
}

}  // namespace

Result<Config> Config::from_toml_string(std::string_view text, const std::string& source_name) {
  toml::table table;
  try {
    table = toml::parse(text, source_name);
  } catch (const toml::parse_error& e) {
    return make_error(ErrorKind::bad_input,
                      fmt::format("{}: {}", location(source_name, e.source()), on_one_line(e.description())));
  }
  Config config;
  DICEBENCH_TRY(flatten(table, "", source_name, config.values_));
  return config;
}

Result<Config> Config::from_toml_file(const std::string& path) {
  const auto text = read_whole_file(path, "config");
  if (!text) return text.error();
  return from_toml_string(*text, path);
}

std::optional<std::string> Config::get(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

Result<void> Config::assign(const std::string& assignment) {
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    return make_error(ErrorKind::bad_input, "--set needs KEY=VALUE, not '" + assignment + "'");
  set(assignment.substr(0, eq), assignment.substr(eq + 1));
  return {};
}

}  // namespace dicebench::host
