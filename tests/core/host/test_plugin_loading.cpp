// Tests of plugin loading and discovery: every ABI error case with a deliberately broken plugin,
// duplicate names, shadowing, manifests (listing without loading), the options suite plugins
// declare (ABI 1.2; a 1.1 descriptor still loads), and the in-tree plugins.
#include "core/host/plugin_library.hpp"
#include "core/host/plugin_manifest.hpp"
#include "core/host/plugin_registry.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>

using namespace dicebench::host;
namespace fs = std::filesystem;

namespace {

const std::string kPlugins = DICEBENCH_TEST_PLUGINS;

std::string plugin(const std::string& folder, const std::string& file) {
  return kPlugins + "/" + folder + "/lib" + file + ".so";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("dicebench-test-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

}  // namespace

TEST_CASE("a valid plugin loads and describes itself") {
  auto loaded = load_plugin_library(plugin("good", "dicebench-model-testslow"));
  REQUIRE_MESSAGE(loaded.ok(), (loaded.ok() ? "" : loaded.error().message));
  CHECK(loaded->info.kind == DICEBENCH_KIND_MODEL);
  CHECK(loaded->info.name == "test-slow");
  REQUIRE(loaded->info.provides.size() == 1);
  CHECK(loaded->info.provides[0].name == "test-slow");
}

TEST_CASE("wrong ABI major is refused, naming the file and both versions") {
  const std::string path = plugin("wrong_abi", "dicebench-model-wrongabi");
  auto loaded = load_plugin_library(path);
  REQUIRE_FALSE(loaded.ok());
  CHECK(loaded.error().message == path + " was built for plugin ABI 99.0, but this dicebench speaks ABI " +
                                      std::to_string(DICEBENCH_ABI_MAJOR) + "." + std::to_string(DICEBENCH_ABI_MINOR) +
                                      "; rebuild the plugin against this SDK");
}

TEST_CASE("a library without the entry symbol is not a plugin") {
  const std::string path = plugin("no_entry", "dicebench-model-noentry");
  auto loaded = load_plugin_library(path);
  REQUIRE_FALSE(loaded.ok());
  CHECK(loaded.error().message == path + " is not a dicebench plugin: it exports no dicebench_plugin_entry symbol");
}

TEST_CASE("a plugin whose kind disagrees with its file name is refused") {
  const std::string path = plugin("wrong_kind", "dicebench-model-wrongkind");
  auto loaded = load_plugin_library(path);
  REQUIRE_FALSE(loaded.ok());
  CHECK(loaded.error().message ==
        path + ": wrong kind: the library declares a suite plugin but its file name says model");
}

TEST_CASE("unresolved symbols fail at load with the loader's text") {
  const std::string path = plugin("unresolved", "dicebench-model-unresolved");
  auto loaded = load_plugin_library(path);
  REQUIRE_FALSE(loaded.ok());
  CHECK(loaded.error().message.rfind("cannot load plugin " + path + ": ", 0) == 0);
  CHECK(contains(loaded.error().message, "undefined symbol: dicebench_test_symbol_nobody_defines"));
}

TEST_CASE("two plugins providing one name are reported, and the name does not resolve") {
  auto registry = PluginRegistry::discover({kPlugins + "/duplicate_a"});
  REQUIRE(registry.problems().size() == 1);
  CHECK(contains(registry.problems()[0], "duplicate model name 'dup-model': provided by "));
  CHECK(contains(registry.problems()[0], "libdicebench-model-dupa.so"));
  CHECK(contains(registry.problems()[0], "libdicebench-model-dupb.so"));
  auto resolved = registry.resolve(DICEBENCH_KIND_MODEL, "dup-model");
  REQUIRE_FALSE(resolved.ok());
  CHECK(contains(resolved.error().message, "is provided by two plugins"));
}

TEST_CASE("discovery keeps going past broken plugins and suggests close names") {
  auto registry = PluginRegistry::discover({kPlugins + "/good", kPlugins + "/wrong_abi", kPlugins + "/no_entry"});
  CHECK(registry.entries(DICEBENCH_KIND_MODEL).size() == 1);
  CHECK(registry.problems().size() == 2);
  auto resolved = registry.resolve(DICEBENCH_KIND_MODEL, "test-slw");
  REQUIRE_FALSE(resolved.ok());
  CHECK(contains(resolved.error().message, "unknown model 'test-slw'; did you mean 'test-slow'?"));
  auto ok = registry.resolve(DICEBENCH_KIND_MODEL, "test-slow");
  REQUIRE(ok.ok());
  CHECK(ok->argument.empty());
}

TEST_CASE("an earlier folder shadows the same plugin file later in the search path") {
  const fs::path first = fresh_dir("shadow");
  fs::copy_file(plugin("good", "dicebench-model-testslow"), first / "libdicebench-model-testslow.so");
  auto registry = PluginRegistry::discover({first.string(), kPlugins + "/good"});
  CHECK(registry.problems().empty());
  const auto entries = registry.entries(DICEBENCH_KIND_MODEL);
  REQUIRE(entries.size() == 1);
  CHECK(fs::path(entries[0].plugin->path).parent_path() == fs::weakly_canonical(first));
  fs::remove_all(first);
}

TEST_CASE("a manifest is read back and goes stale when the library changes") {
  const fs::path dir = fresh_dir("manifest");
  const fs::path library = dir / "libdicebench-model-testslow.so";
  fs::copy_file(plugin("good", "dicebench-model-testslow"), library);
  auto written = write_manifest(library.string());
  REQUIRE(written.ok());
  auto read = read_manifest(library.string());
  REQUIRE(read.ok());
  REQUIRE(read->has_value());
  CHECK((*read)->name == "test-slow");
  CHECK((*read)->provides.at(0).name == "test-slow");
  fs::last_write_time(library, fs::last_write_time(library) + std::chrono::seconds(5));
  auto stale = read_manifest(library.string());
  REQUIRE(stale.ok());
  CHECK_FALSE(stale->has_value());
  fs::remove_all(dir);
}

TEST_CASE("listing uses the manifest and never loads the library") {
  // A "library" that cannot be loaded at all, with a manifest that matches its size and time:
  // listing shows its names, and only loading it fails, with the loader's error.
  const fs::path dir = fresh_dir("listing");
  const fs::path library = dir / "libdicebench-model-heavy.so";
  { std::ofstream(library, std::ios::binary) << std::string(4096, 'x'); }
  const auto mtime =
      std::chrono::duration_cast<std::chrono::nanoseconds>(fs::last_write_time(library).time_since_epoch()).count();
  {
    std::ofstream manifest(manifest_path_for(library.string()));
    manifest << R"({"abi_major":1,"abi_minor":0,"kind":"model","name":"heavy","version":"1","build_id":"x",)"
             << R"("provides":[{"name":"heavy-8b","summary":"needs libtorch"}],)"
             << R"("library":{"file":"libdicebench-model-heavy.so","size":4096,"mtime_ns":)" << mtime << "}}";
  }
  auto registry = PluginRegistry::discover({dir.string()});
  CHECK(registry.problems().empty());
  const auto entries = registry.entries(DICEBENCH_KIND_MODEL);
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].name == "heavy-8b");
  auto loaded = registry.load(*entries[0].plugin);
  REQUIRE_FALSE(loaded.ok());
  CHECK(contains(loaded.error().message, "cannot load plugin " + library.string()));
  fs::remove_all(dir);
}

TEST_CASE("the in-tree plugins provide the KernelBench and dice-infill suites and replay") {
  auto registry = PluginRegistry::discover(PluginRegistry::default_search_dirs());
  std::vector<std::string> suites, models;
  for (const auto& e : registry.entries(DICEBENCH_KIND_SUITE)) suites.push_back(e.name);
  for (const auto& e : registry.entries(DICEBENCH_KIND_MODEL)) models.push_back(e.name);
  CHECK(suites == std::vector<std::string>{"dice-infill", "kernelbench", "kernelbench-l1", "kernelbench-l2",
                                           "kernelbench-l3", "kernelbench-l4"});
  CHECK(std::find(models.begin(), models.end(), "replay:") != models.end());
  auto replay = registry.resolve(DICEBENCH_KIND_MODEL, "replay:/some/folder");
  REQUIRE(replay.ok());
  CHECK(replay->argument == "/some/folder");
  auto bare = registry.resolve(DICEBENCH_KIND_MODEL, "replay:");
  REQUIRE_FALSE(bare.ok());
  CHECK(contains(bare.error().message, "needs an argument"));
  auto typo = registry.resolve(DICEBENCH_KIND_SUITE, "kernelbench-l5");
  REQUIRE_FALSE(typo.ok());
  CHECK(contains(typo.error().message, "unknown suite 'kernelbench-l5'; did you mean"));
}

TEST_CASE("a suite plugin's declared options load with it") {
  auto loaded = load_plugin_library(plugin("suite_options", "dicebench-suite-testopts"));
  REQUIRE_MESSAGE(loaded.ok(), (loaded.ok() ? "" : loaded.error().message));
  CHECK(loaded->info.abi_minor == DICEBENCH_ABI_MINOR);
  CHECK(loaded->info.options == std::vector<DeclaredOption>{{"test-greeting", "testopts.greeting", "TEXT",
                                                             "A greeting the suite reports in its settings"}});
}

TEST_CASE("an ABI 1.1 descriptor loads and declares no options, whatever lies past its size") {
  auto loaded = load_plugin_library(plugin("abi_1_1", "dicebench-suite-testold"));
  REQUIRE_MESSAGE(loaded.ok(), (loaded.ok() ? "" : loaded.error().message));
  CHECK(loaded->info.abi_minor == 1);
  CHECK(loaded->info.provides.at(0).name == "test-old");
  CHECK(loaded->info.options.empty());
}

TEST_CASE("declared options that break a rule are refused at load, naming the file") {
  const std::string bad_flag = plugin("bad_flag_name", "dicebench-suite-testbadflag");
  const std::string foreign = plugin("foreign_setting", "dicebench-suite-testforeign");
  const std::string twice = plugin("flag_twice", "dicebench-suite-testtwice");
  const std::string model = plugin("model_options", "dicebench-model-modeloptions");
  const std::pair<std::string, std::string> cases[] = {
      {bad_flag,
       bad_flag + ": plugin 'testbadflag' declares the flag 'Test_Greeting'; a flag is a lowercase letter followed by "
                  "lowercase letters, digits and '-' (\"kernelbench-root\" for --kernelbench-root)"},
      {foreign,
       foreign +
           ": plugin 'testforeign' maps --test-device to the setting 'eval.device', which is not in its own section "
           "(testforeign.KEY)"},
      {twice, twice + ": plugin 'testtwice' declares --test-greeting twice"},
      {model, model + ": plugin 'model-options' declares command-line options, which only suite plugins may"},
  };
  for (const auto& [path, message] : cases) {
    auto loaded = load_plugin_library(path);
    REQUIRE_FALSE(loaded.ok());
    CHECK(loaded.error().message == message);
  }
  // Discovery reports them and goes on.
  auto registry = PluginRegistry::discover({kPlugins + "/suite_options", kPlugins + "/foreign_setting"});
  CHECK(registry.plugins(DICEBENCH_KIND_SUITE).size() == 1);
  REQUIRE(registry.problems().size() == 1);
  CHECK(contains(registry.problems()[0], "not in its own section"));
}

TEST_CASE(
    "a manifest carries the declared options, and one without them reads as none before ABI 1.2 and as stale after") {
  const fs::path dir = fresh_dir("manifest-options");
  const fs::path library = dir / "libdicebench-suite-testopts.so";
  fs::copy_file(plugin("suite_options", "dicebench-suite-testopts"), library);
  REQUIRE(write_manifest(library.string()).ok());
  auto read = read_manifest(library.string());
  REQUIRE(read.ok());
  REQUIRE(read->has_value());
  CHECK((*read)->options == std::vector<DeclaredOption>{{"test-greeting", "testopts.greeting", "TEXT",
                                                         "A greeting the suite reports in its settings"}});

  // The same manifest rewritten: without "options" (as a dicebench before ABI 1.2 wrote it), with
  // other options, with options that break a rule.
  const std::string manifest_path = manifest_path_for(library.string());
  const auto written = nlohmann::json::parse(std::ifstream(manifest_path));
  const auto rewrite = [&](const std::function<void(nlohmann::json&)>& change) {
    nlohmann::json manifest = written;
    change(manifest);
    std::ofstream(manifest_path, std::ios::trunc) << manifest.dump();
  };
  rewrite([](nlohmann::json& m) { m.erase("options"); });
  auto stale = read_manifest(library.string());
  REQUIRE(stale.ok());
  CHECK_FALSE(stale->has_value());
  rewrite([](nlohmann::json& m) {
    m.erase("options");
    m["abi_minor"] = 1;
  });
  auto old = read_manifest(library.string());
  REQUIRE(old.ok());
  REQUIRE(old->has_value());
  CHECK((*old)->options.empty());
  rewrite([](nlohmann::json& m) { m["options"][0]["help"] = "something else"; });
  auto registry = PluginRegistry::discover({dir.string()});
  REQUIRE(registry.plugins(DICEBENCH_KIND_SUITE).size() == 1);
  CHECK(registry.plugins(DICEBENCH_KIND_SUITE)[0]->options.at(0).help == "something else");
  auto loaded = registry.load(*registry.plugins(DICEBENCH_KIND_SUITE)[0]);
  REQUIRE_FALSE(loaded.ok());
  CHECK(loaded.error().message ==
        library.string() +
            ": its manifest is stale (the library declares other command-line options); rebuild the plugin");
  rewrite([](nlohmann::json& m) { m["options"][0]["setting"] = "eval.device"; });
  auto foreign = read_manifest(library.string());
  REQUIRE_FALSE(foreign.ok());
  CHECK(foreign.error().message.rfind(
            manifest_path + ": plugin 'testopts' maps --test-greeting to the setting 'eval.device'", 0) == 0);
  fs::remove_all(dir);
}

TEST_CASE("the in-tree KernelBench suite declares --kernelbench-root for kernelbench.root") {
  auto registry = PluginRegistry::discover(PluginRegistry::default_search_dirs());
  const PluginInfo* kernelbench = nullptr;
  for (const PluginInfo* suite : registry.plugins(DICEBENCH_KIND_SUITE))
    if (suite->name == "kernelbench") kernelbench = suite;
  REQUIRE(kernelbench != nullptr);
  REQUIRE(kernelbench->options.size() == 1);
  CHECK(kernelbench->options[0].flag == "kernelbench-root");
  CHECK(kernelbench->options[0].setting == "kernelbench.root");
  CHECK(kernelbench->options[0].value_name == "PATH");
}
