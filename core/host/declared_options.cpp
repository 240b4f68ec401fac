// The rules of the flags suite plugins declare: checked at load time and when a manifest is read.
#include "core/host/declared_options.hpp"

#include "core/base/one_line.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace dicebench::host {
namespace {

bool is_flag_name(const std::string& flag) {
  if (flag.empty() || flag.front() < 'a' || flag.front() > 'z') return false;
  return std::all_of(flag.begin(), flag.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; });
}

// The key after the section: not empty, and nothing a --set KEY=VALUE or a TOML key could not hold.
bool is_setting_key(const std::string& key) {
  if (key.empty() || key.back() == '.') return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
           c == '.';
  });
}

}  // namespace

Result<void> check_declared_options(const std::string& where, dicebench_kind kind, const std::string& plugin_name,
                                    const std::vector<DeclaredOption>& options) {
  if (options.empty()) return {};
  if (kind != DICEBENCH_KIND_SUITE)
    return make_error(
        fmt::format("{}: plugin '{}' declares command-line options, which only suite plugins may", where, plugin_name));
  const std::string section = plugin_name + ".";
  std::set<std::string> flags, settings;
  for (const auto& option : options) {
    if (!is_flag_name(option.flag))
      return make_error(
          fmt::format("{}: plugin '{}' declares the flag '{}'; a flag is a lowercase letter followed by lowercase "
                      "letters, digits and '-' (\"kernelbench-root\" for --kernelbench-root)",
                      where, plugin_name, on_one_line(option.flag)));
    if (!option.setting.starts_with(section) || !is_setting_key(option.setting.substr(section.size())))
      return make_error(
          fmt::format("{}: plugin '{}' maps --{} to the setting '{}', which is not in its own section ({}KEY)", where,
                      plugin_name, option.flag, on_one_line(option.setting), section));
    if (!flags.insert(option.flag).second)
      return make_error(fmt::format("{}: plugin '{}' declares --{} twice", where, plugin_name, option.flag));
    if (!settings.insert(option.setting).second)
      return make_error(
          fmt::format("{}: plugin '{}' maps two flags to the setting '{}'", where, plugin_name, option.setting));
  }
  return {};
}

}  // namespace dicebench::host
