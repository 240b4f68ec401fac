// The built example plugin, loaded as the host loads it and driven through the C ABI only:
// its completions are deterministic, carry the problem's name, honour `example.prefix`, and
// generation stops when the host cancels.
#include "c_abi_harness.hpp"

#include <dicebench/plugin.h>

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace dicebench::test;

namespace {

const dicebench_model_api& example_api() {
  static const dicebench_model_api* api = [] {
    std::string error;
    const dicebench_plugin_descriptor* descriptor = load_plugin(DICEBENCH_EXAMPLE_PLUGIN, &error);
    REQUIRE_MESSAGE(descriptor, error);
    return static_cast<const dicebench_model_api*>(descriptor->api);
  }();
  return *api;
}

dicebench_model* open_example(const StubHost& host) {
  dicebench_model* model = nullptr;
  dicebench_error e{};
  REQUIRE_MESSAGE(example_api().open(&host.services, c_str("example-echo"), c_str(""), &model, &e) == DICEBENCH_OK,
                  e.message);
  return model;
}

std::vector<ReceivedResult> generate(dicebench_model* model,
                                     const std::vector<dicebench_generation_request>& requests) {
  ResultCollector collector;
  dicebench_error e{};
  REQUIRE_MESSAGE(example_api().prepare(model, requests.data(), requests.size(), &e) == DICEBENCH_OK, e.message);
  REQUIRE_MESSAGE(example_api().generate(model, requests.data(), requests.size(), &ResultCollector::sink, &collector,
                                         &e) == DICEBENCH_OK,
                  e.message);
  return collector.results;
}

}  // namespace

TEST_CASE(
    "example plugin: descriptor serves example-echo with every model function but the optional "
    "optional_stored_samples") {
  std::string error;
  const dicebench_plugin_descriptor* descriptor = load_plugin(DICEBENCH_EXAMPLE_PLUGIN, &error);
  REQUIRE_MESSAGE(descriptor, error);
  CHECK(descriptor->abi_major == DICEBENCH_ABI_MAJOR);
  CHECK(descriptor->struct_size == sizeof(dicebench_plugin_descriptor));
  CHECK(descriptor->kind == DICEBENCH_KIND_MODEL);
  CHECK(text_of(descriptor->name) == "example");
  REQUIRE(descriptor->provides_count == 1);
  CHECK(text_of(descriptor->provides[0].name) == "example-echo");
  const auto* api = static_cast<const dicebench_model_api*>(descriptor->api);
  CHECK(api->struct_size == sizeof(dicebench_model_api));
  CHECK((api->optional_stored_samples == nullptr));
}

TEST_CASE("example plugin: completions are deterministic fenced blocks naming the problem") {
  StubHost host;
  dicebench_model* model = open_example(host);
  const std::vector<dicebench_generation_request> requests{make_request(1, 1, 0, "prompt A", "Square_matmul_"),
                                                           make_request(1, 1, 0, "prompt B", "Square_matmul_")};
  const auto first = generate(model, requests);
  const auto again = generate(model, requests);
  REQUIRE(first.size() == 2);
  REQUIRE(again.size() == 2);
  CHECK(first[0].completion == again[0].completion);
  CHECK(first[0].completion != first[1].completion);  // the prompt's hash differs
  CHECK(first[0].completion.starts_with("```python\n"));
  CHECK(first[0].completion.ends_with("```\n"));
  CHECK(first[0].completion.find("Square_matmul_") != std::string::npos);
  CHECK(first[0].completion.find("class ModelNew") != std::string::npos);
  CHECK_FALSE(first[0].candidate);
  CHECK(first[0].stats_json == R"({"source":"example-echo","prompt_bytes":8})");

  dicebench_error e{};
  std::string described;
  REQUIRE(example_api().describe(model, &append_text, &described, &e) == DICEBENCH_OK);
  CHECK(described == R"({"model":"example-echo","prefix":""})");
  CHECK(example_api().preferred_batch(model) > 0);
  example_api().close(model);
}

TEST_CASE("example plugin: example.prefix from the config comes before the block") {
  StubHost host;
  host.config["example.prefix"] = "Here is \"my\" kernel:\n";
  dicebench_model* model = open_example(host);
  const auto results = generate(model, {make_request(2, 7, 3)});
  REQUIRE(results.size() == 1);
  CHECK(results[0].completion.starts_with("Here is \"my\" kernel:\n```python\n"));
  dicebench_error e{};
  std::string described;
  REQUIRE(example_api().describe(model, &append_text, &described, &e) == DICEBENCH_OK);
  CHECK(described == R"({"model":"example-echo","prefix":"Here is \"my\" kernel:\u000a"})");
  example_api().close(model);
}

TEST_CASE("example plugin: bad input and cancellation") {
  StubHost host;
  dicebench_model* model = nullptr;
  dicebench_error e{};
  CHECK(example_api().open(&host.services, c_str("example-echo"), c_str("arg"), &model, &e) == DICEBENCH_FAILED);
  CHECK(std::string(e.message).find("no argument") != std::string::npos);

  model = open_example(host);
  const std::vector<dicebench_generation_request> empty_prompt{make_request(1, 5, 0, "")};
  CHECK(example_api().prepare(model, empty_prompt.data(), empty_prompt.size(), &e) == DICEBENCH_FAILED);
  CHECK(std::string(e.message).find("problem 5") != std::string::npos);

  const std::vector<dicebench_generation_request> requests{make_request(1, 1, 0), make_request(1, 2, 0),
                                                           make_request(1, 3, 0)};
  ResultCollector collector;
  collector.host = &host;
  collector.cancel_after = 2;
  CHECK(example_api().generate(model, requests.data(), requests.size(), &ResultCollector::sink, &collector, &e) ==
        DICEBENCH_CANCELLED);
  CHECK(collector.results.size() == 2);
  example_api().close(model);
}
