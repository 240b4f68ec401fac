// The names a configuration may hold (setting_names.hpp).
#include "core/host/setting_names.hpp"

#include "core/base/one_line.hpp"
#include "core/base/text.hpp"
#include "core/host/evaluation_settings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

namespace dicebench::host {
namespace {

constexpr std::string_view kEvalSection = "eval";

template <size_t N>
std::vector<std::string> names(const std::string_view (&keys)[N]) {
  return {std::begin(keys), std::end(keys)};
}

std::string with_hint(std::string message, const std::string& name, const std::vector<std::string>& known) {
  if (const std::string hint = did_you_mean(name, known); !hint.empty()) message += " (" + hint + ")";
  return message;
}

}  // namespace

Result<void> check_setting_names(const Config& config, const PluginRegistry& registry) {
  std::set<std::string> sections = {std::string(kEvalSection)};  // sorted, for the message
  for (const dicebench_kind kind : {DICEBENCH_KIND_MODEL, DICEBENCH_KIND_SUITE})
    for (const PluginInfo* plugin : registry.plugins(kind)) sections.insert(plugin->name);
  for (const auto& [key, value] : config.values()) {
    const size_t dot = key.find('.');
    if (dot == std::string::npos) {
      if (std::find(std::begin(kRunKeys), std::end(kRunKeys), key) != std::end(kRunKeys)) continue;
      return make_error(ErrorKind::bad_input,
                        with_hint(fmt::format("unknown setting '{}'", on_one_line(key)), key, names(kRunKeys)));
    }
    const std::string section = key.substr(0, dot);
    if (section == kEvalSection) {
      if (std::find(std::begin(kEvalKeys), std::end(kEvalKeys), key) != std::end(kEvalKeys)) continue;
      return make_error(
          ErrorKind::bad_input,
          with_hint(fmt::format("unknown setting '{}': the [eval] section has no such key", on_one_line(key)), key,
                    names(kEvalKeys)));
    }
    if (sections.contains(section)) continue;  // the plugin's own keys are the plugin's to check
    return make_error(
        ErrorKind::bad_input,
        with_hint(fmt::format("setting '{}' is in no known section: '{}' is neither eval nor an installed "
                              "plugin ({})",
                              on_one_line(key), on_one_line(section), join({sections.begin(), sections.end()}, ", ")),
                  section, {sections.begin(), sections.end()}));
  }
  return {};
}

Result<void> check_settings_asked(const Config& given, const std::set<std::string>& asked,
                                  const std::vector<std::string>& opened, bool other_sections) {
  for (const auto& [key, value] : given.values()) {
    const size_t dot = key.find('.');
    if (dot == std::string::npos) continue;
    const std::string section = key.substr(0, dot);
    if (section == kEvalSection || asked.contains(key)) continue;
    if (std::find(opened.begin(), opened.end(), section) == opened.end()) {
      if (other_sections) continue;
      return make_error(ErrorKind::bad_input,
                        fmt::format("setting '{}' is for the {} plugin, which this evaluation does not use{}",
                                    on_one_line(key), on_one_line(section), opened.empty() ? " (give --suite)" : ""));
    }
    std::vector<std::string> known;
    for (const auto& name : asked)
      if (name.starts_with(section + ".")) known.push_back(name);
    return make_error(ErrorKind::bad_input, with_hint(fmt::format("setting '{}' is not one the {} plugin reads",
                                                                  on_one_line(key), on_one_line(section)),
                                                      key, known));
  }
  return {};
}

}  // namespace dicebench::host
