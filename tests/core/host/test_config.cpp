// Tests of TOML configuration: flattening, flags on top, and file:line:column errors.
#include "core/host/config.hpp"

#include <doctest/doctest.h>

using namespace dicebench::host;

TEST_CASE("TOML settings flatten to dotted keys") {
  auto config = Config::from_toml_string(R"(
model = "dice-8b"
suite = "kernelbench-l2"
samples = 4
problems = [1, "3-5"]
[kernelbench]
root = "/data/KernelBench"
prompt = "zero_shot"
[sampling.dice]
temperature = 0.5
greedy = false
)",
                                         "run.toml");
  REQUIRE_MESSAGE(config.ok(), (config.ok() ? "" : config.error().message));
  CHECK(config->get("model") == "dice-8b");
  CHECK(config->get("samples") == "4");
  CHECK(config->get("problems") == "1,3-5");
  CHECK(config->get("kernelbench.root") == "/data/KernelBench");
  CHECK(config->get("sampling.dice.temperature") == "0.5");
  CHECK(config->get("sampling.dice.greedy") == "false");
  CHECK_FALSE(config->get("db").has_value());
  config->set("model", "qwen3-8b");
  CHECK(config->get("model") == "qwen3-8b");
}

TEST_CASE("malformed TOML names the file and line and column") {
  auto config = Config::from_toml_string("model = \"dice-8b\"\nsamples = = 3\n", "bad.toml");
  REQUIRE_FALSE(config.ok());
  CHECK(config.error().message.rfind("bad.toml:2:", 0) == 0);
}

TEST_CASE("a TOML error quoting a line break stays on one line") {
  // Found by fuzz_run_config: toml++ quotes what it saw, here "t" and the line break after it.
  auto config = Config::from_toml_string("model = \"dice-8b\"\ngreedy = t\n", "bad.toml");
  REQUIRE_FALSE(config.ok());
  CHECK(config.error().message.rfind("bad.toml:2:", 0) == 0);
  CHECK(config.error().message.find('\n') == std::string::npos);
  CHECK(config.error().message.find("saw 't\\n'") != std::string::npos);
}

TEST_CASE("unknown top-level settings are refused with a hint") {
  auto config = Config::from_toml_string("modle = \"dice-8b\"\n", "run.toml");
  REQUIRE_FALSE(config.ok());
  CHECK(config.error().message ==
        "run.toml:1:1: unknown setting 'modle' (did you mean 'model'?); plugin settings go in a section such as "
        "[kernelbench]");
}

TEST_CASE("a missing config file is an error naming it") {
  auto config = Config::from_toml_file("/nonexistent/dicebench.toml");
  REQUIRE_FALSE(config.ok());
  CHECK(config.error().message.find("/nonexistent/dicebench.toml") != std::string::npos);
}
