// The names a configuration may hold (core/host/setting_names.hpp): the run's own, [eval]'s, a
// section per installed plugin; and, once plugins are open, only keys they asked for in theirs.
#include "core/host/evaluation_settings.hpp"
#include "core/host/host_services.hpp"
#include "core/host/plugin_registry.hpp"
#include "core/host/setting_names.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace dicebench::host;

namespace {

const std::string kPlugins = DICEBENCH_TEST_PLUGINS;

Config with(std::initializer_list<std::pair<const char*, const char*>> values) {
  Config config;
  for (const auto& [key, value] : values) config.set(key, value);
  return config;
}

std::string error_of(const dicebench::Result<void>& result) { return result ? "" : result.error().message; }

}  // namespace

TEST_CASE("a configuration holds the run's keys, [eval]'s and installed plugins' sections, and nothing else") {
  const auto registry = PluginRegistry::discover({kPlugins + "/good"});  // the model plugin test-slow
  CHECK(error_of(check_setting_names(with({{"model", "x"},
                                           {"samples", "2"},
                                           {"infill", "chat"},
                                           {"eval.trials", "3"},
                                           {"test-slow.delay_ms", "5"},
                                           {"test-slow.anything", "1"}}),
                                     registry)) == "");
  for (const auto& key : kEvalKeys) CHECK(error_of(check_setting_names(with({{key.data(), "1"}}), registry)) == "");
  CHECK(error_of(check_setting_names(with({{"samplez", "2"}}), registry)) ==
        "unknown setting 'samplez' (did you mean 'samples'?)");
  CHECK(error_of(check_setting_names(with({{"eval.trails", "2"}}), registry)) ==
        "unknown setting 'eval.trails': the [eval] section has no such key (did you mean 'eval.trials'?)");
  CHECK(error_of(check_setting_names(with({{"tset-slow.delay_ms", "2"}}), registry)) ==
        "setting 'tset-slow.delay_ms' is in no known section: 'tset-slow' is neither eval nor an installed plugin "
        "(eval, test-slow) "
        "(did you mean 'test-slow'?)");
}

TEST_CASE(
    "keys in an open plugin's section must be ones it asked for, and other plugins' sections only where allowed") {
  Config config = with({{"test-slow.delay_ms", "5"}});
  HostServices services(config);
  dicebench_str value{};
  CHECK(services.table()->config_get(services.table()->host, {"test-slow.delay_ms", 18}, &value) == 1);
  CHECK(std::string(value.data, value.size) == "5");
  CHECK(services.table()->config_get(services.table()->host, {"test-slow.fail_at", 17}, &value) == 0);
  CHECK(services.asked() == std::set<std::string>{"test-slow.delay_ms", "test-slow.fail_at"});

  const std::vector<std::string> opened = {"test-slow"};
  CHECK(error_of(check_settings_asked(with({{"test-slow.delay_ms", "1"}, {"eval.trials", "2"}, {"samples", "1"}}),
                                      services.asked(), opened, false)) == "");
  CHECK(error_of(check_settings_asked(with({{"test-slow.fail_st", "1"}}), services.asked(), opened, true)) ==
        "setting 'test-slow.fail_st' is not one the test-slow plugin reads (did you mean 'test-slow.fail_at'?)");
  CHECK(error_of(check_settings_asked(with({{"openai.base_url", "x"}}), services.asked(), opened, true)) == "");
  CHECK(error_of(check_settings_asked(with({{"openai.base_url", "x"}}), services.asked(), opened, false)) ==
        "setting 'openai.base_url' is for the openai plugin, which this evaluation does not use");
  CHECK(error_of(check_settings_asked(with({{"openai.base_url", "x"}}), services.asked(), {}, false)) ==
        "setting 'openai.base_url' is for the openai plugin, which this evaluation does not use (give --suite)");
}
