// Evaluation settings from a config: the helper executables the harness runs sit beside the
// worker (a missing compile step sent every load_inline call to torch's toolchain on the GPU
// host), bad values of the verdict settings are one error naming the setting, and eval.tolerance
// takes the tolerance modes and their old names.
#include "core/host/evaluation_settings.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

using namespace dicebench;
namespace fs = std::filesystem;

TEST_CASE("the sandbox launcher and the compile step are found beside the worker") {
  host::Config config;
  auto s = host::evaluation_settings(config);
  REQUIRE(s.ok());
  const fs::path folder = fs::path(s->worker_executable).parent_path();
  CHECK(fs::path(s->compile_executable) == folder / "dicebench-compile");
  CHECK(fs::path(s->sandbox.executable) == folder / "dicebench-sandbox");
  CHECK(s->speedup_bound == 10.0);
  CHECK(s->bandwidth == 0.0);
  CHECK(s->confirm_fastpath_failures);
  CHECK(s->toolchain_precompiled_headers);
}

TEST_CASE("verdict settings are read, and bad values name the setting") {
  host::Config config;
  config.set("eval.speedup_bound", "25");
  config.set("eval.bandwidth_gbps", "3350");
  config.set("eval.confirm_fastpath", "off");
  config.set("eval.toolchain_pch", "off");
  auto s = host::evaluation_settings(config);
  REQUIRE(s.ok());
  CHECK(s->speedup_bound == 25.0);
  CHECK(s->bandwidth == doctest::Approx(3.35e12));
  CHECK_FALSE(s->confirm_fastpath_failures);
  CHECK_FALSE(s->toolchain_precompiled_headers);
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{{"eval.speedup_bound", "fast"},
                                                                                   {"eval.bandwidth_gbps", "-1"},
                                                                                   {"eval.confirm_fastpath", "maybe"},
                                                                                   {"eval.toolchain_pch", "maybe"}}) {
    host::Config bad;
    bad.set(key, value);
    auto refused = host::evaluation_settings(bad);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().message.find(key) != std::string::npos);
  }
}

TEST_CASE("eval.tolerance is a tolerance mode, by its name or its old one, and the worker is sent the name") {
  const std::pair<const char*, const char*> read_as[] = {
      {"per_dtype", "per_dtype"}, {"uniform", "uniform"}, {"kernelbench", "per_dtype"}, {"compat", "uniform"}};
  for (const auto& [given, mode] : read_as) {
    host::Config config;
    config.set("eval.tolerance", given);
    auto s = host::evaluation_settings(config);
    REQUIRE_MESSAGE(s.ok(), given);
    CHECK(tolerance_mode_name(s->tolerance) == mode);
    CHECK(host::tolerance_mode(given) == parse_tolerance_mode(mode));
  }
  auto unset = host::evaluation_settings(host::Config{});
  REQUIRE(unset.ok());
  CHECK(tolerance_mode_name(unset->tolerance) == "per_dtype");
  for (const char* bad : {"loose", "", "Per_dtype", "kernelbench "}) {
    CHECK_FALSE(host::tolerance_mode(bad).has_value());
    host::Config config;
    config.set("eval.tolerance", bad);
    auto refused = host::evaluation_settings(config);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().message ==
          std::string("eval.tolerance must be per_dtype or uniform (or the old names: kernelbench for "
                      "per_dtype, compat for uniform), not '") +
              bad + "'");
  }
}

TEST_CASE("timing settings: the spread timing stops at, warm calls and the batch budget, with their defaults") {
  auto unset = host::evaluation_settings(host::Config{});
  REQUIRE(unset.ok());
  CHECK(unset->target_rel_ci == 0.02);
  CHECK(unset->warm_calls);
  CHECK(unset->batch_bytes == int64_t{4} << 30);
  host::Config config;
  config.set("eval.timing_spread", "0.05");
  config.set("eval.warm_calls", "off");
  config.set("eval.timing_batch", "512MiB");
  auto s = host::evaluation_settings(config);
  REQUIRE(s.ok());
  CHECK(s->target_rel_ci == 0.05);
  CHECK_FALSE(s->warm_calls);
  CHECK(s->batch_bytes == int64_t{512} << 20);
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{{"eval.timing_spread", "0"},
                                                                                   {"eval.timing_spread", "1.5"},
                                                                                   {"eval.timing_spread", "2%"},
                                                                                   {"eval.warm_calls", "yes"},
                                                                                   {"eval.timing_batch", "lots"},
                                                                                   {"eval.timing_batch", "0"}}) {
    host::Config bad;
    bad.set(key, value);
    auto refused = host::evaluation_settings(bad);
    REQUIRE_FALSE_MESSAGE(refused.ok(), (key + "=" + value));
    CHECK(refused.error().message.find(key) != std::string::npos);
  }
}

TEST_CASE("eval.gpu_slots: evaluators per GPU, four untimed and one timed by default, and bad values refused") {
  setenv("CUDA_VISIBLE_DEVICES", "0,1", 1);  // the GPUs visible_gpus() finds
  const auto slots_of = [](const host::Config& config, bool timing) {
    auto slots = host::evaluation_slots(config, "cuda", timing);
    REQUIRE_MESSAGE(slots.ok(), (slots ? std::string() : slots.error().message));
    std::vector<std::string> ids;
    for (const auto& slot : *slots) ids.push_back(slot.value_or("none"));
    return ids;
  };
  host::Config plain;
  CHECK(slots_of(plain, true) == std::vector<std::string>{"0", "1"});
  CHECK(slots_of(plain, false) == std::vector<std::string>{"0", "1", "0", "1", "0", "1", "0", "1"});
  host::Config two;
  two.set("eval.gpu_slots", "2");
  two.set("eval.gpus", "1");
  CHECK(slots_of(two, true) == std::vector<std::string>{"1", "1"});
  CHECK(slots_of(two, false) == std::vector<std::string>{"1", "1"});
  for (const char* bad : {"0", "17", "many", "-2"}) {
    host::Config config;
    config.set("eval.gpu_slots", bad);
    for (const char* device : {"cuda", "cpu"}) {  // never quietly dropped on the CPU either
      auto refused = host::evaluation_slots(config, device, false);
      REQUIRE_FALSE(refused.ok());
      CHECK(refused.error().kind == ErrorKind::bad_input);
      CHECK(refused.error().message.find("eval.gpu_slots") != std::string::npos);
    }
  }
  unsetenv("CUDA_VISIBLE_DEVICES");
}
