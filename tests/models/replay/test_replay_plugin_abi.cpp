// The built replay plugin, loaded as the host loads it and driven through the C ABI only:
// descriptor, open errors, describe, stored_samples, prepare, generate and cancellation.
#include "tests/plugins/c_abi_harness.hpp"
#include "tests/plugins/temp_folder.hpp"

#include <dicebench/plugin.h>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

using namespace dicebench::test;

namespace {

const dicebench_model_api& replay_api() {
  static const dicebench_model_api* api = [] {
    std::string error;
    const dicebench_plugin_descriptor* descriptor = load_plugin(DICEBENCH_REPLAY_PLUGIN, &error);
    REQUIRE_MESSAGE(descriptor, error);
    return static_cast<const dicebench_model_api*>(descriptor->api);
  }();
  return *api;
}

// Opens "replay:<folder>"; on failure returns nullptr and the error line.
dicebench_model* open_replay(const StubHost& host, const std::string& folder, std::string* error) {
  dicebench_model* model = nullptr;
  dicebench_error e{};
  const dicebench_status status = replay_api().open(&host.services, c_str("replay:"), c_str(folder), &model, &e);
  if (status != DICEBENCH_OK) {
    *error = e.message;
    return nullptr;
  }
  return model;
}

void write_sample_folder(const TempFolder& folder) {
  folder.write("level_1_problem_1_sample_0_kernel.py", "class ModelNew:  # kernel 1/0\n    pass\n");
  folder.write("level_1_problem_1_sample_1_kernel.py", "class ModelNew:  # kernel 1/1\n    pass\n");
  folder.write("level_1_problem_2_sample_0.txt", "Sure!\n```python\nclass ModelNew: pass\n```\n");
  folder.write("level_1_problem_2_sample_1.txt", "raw 2/1");
  folder.write("level_1_problem_2_sample_0_prompt.txt", "ignored prompt log");
}

}  // namespace

TEST_CASE("replay plugin: descriptor through the entry symbol") {
  std::string error;
  const dicebench_plugin_descriptor* descriptor = load_plugin(DICEBENCH_REPLAY_PLUGIN, &error);
  REQUIRE_MESSAGE(descriptor, error);
  CHECK(descriptor->abi_major == DICEBENCH_ABI_MAJOR);
  CHECK(descriptor->abi_minor == DICEBENCH_ABI_MINOR);
  CHECK(descriptor->struct_size == sizeof(dicebench_plugin_descriptor));
  CHECK(descriptor->kind == DICEBENCH_KIND_MODEL);
  CHECK(text_of(descriptor->name) == "replay");
  CHECK_FALSE(text_of(descriptor->version).empty());
  CHECK_FALSE(text_of(descriptor->build_id).empty());
  REQUIRE(descriptor->provides_count == 1);
  CHECK(text_of(descriptor->provides[0].name) == "replay:");
  CHECK_FALSE(text_of(descriptor->provides[0].summary).empty());
  const auto* api = static_cast<const dicebench_model_api*>(descriptor->api);
  REQUIRE(api);
  CHECK(api->struct_size == sizeof(dicebench_model_api));
  CHECK((api->open != nullptr));
  CHECK((api->close != nullptr));
  CHECK((api->describe != nullptr));
  CHECK((api->preferred_batch != nullptr));
  CHECK((api->prepare != nullptr));
  CHECK((api->generate != nullptr));
  CHECK((api->optional_stored_samples != nullptr));
}

TEST_CASE("replay plugin: open fails with one line naming the folder and the expected files") {
  StubHost host;
  TempFolder folder;
  std::string error;
  CHECK_FALSE(open_replay(host, (folder.path() / "absent").string(), &error));
  CHECK(error.find((folder.path() / "absent").string()) != std::string::npos);
  CHECK(error.find("level_<L>_problem_<P>_sample_<S>_kernel.py") != std::string::npos);
  CHECK(error.find('\n') == std::string::npos);

  CHECK_FALSE(open_replay(host, folder.path().string(), &error));
  CHECK(error.find("no replay files") != std::string::npos);

  CHECK_FALSE(open_replay(host, "", &error));
  CHECK(error.find("replay:<folder>") != std::string::npos);

  dicebench_model* model = nullptr;
  dicebench_error e{};
  CHECK(replay_api().open(&host.services, c_str("other"), c_str(folder.path().string()), &model, &e) ==
        DICEBENCH_FAILED);
  CHECK_FALSE(model);
}

TEST_CASE("replay plugin: describe, stored samples, prepare and generate") {
  StubHost host;
  TempFolder folder;
  write_sample_folder(folder);
  std::string error;
  dicebench_model* model = open_replay(host, folder.path().string(), &error);
  REQUIRE_MESSAGE(model, error);
  const dicebench_model_api& api = replay_api();
  CHECK(host.logged(DICEBENCH_LOG_DEBUG, "level_1_problem_2_sample_0_prompt.txt"));
  CHECK(api.preferred_batch(model) == 64);

  dicebench_error e{};
  std::string described;
  REQUIRE(api.describe(model, &append_text, &described, &e) == DICEBENCH_OK);
  const auto description = nlohmann::json::parse(described);
  CHECK(description.at("folder") == folder.path().string());
  CHECK(description.at("files") == 4);
  CHECK(description.at("content_sha256").get<std::string>().size() == 64);

  std::string stored;
  REQUIRE(api.optional_stored_samples(model, 1, &append_text, &stored, &e) == DICEBENCH_OK);
  CHECK(nlohmann::json::parse(stored) == nlohmann::json{{"1", 2}, {"2", 2}});
  std::string none;
  CHECK(api.optional_stored_samples(model, 2, &append_text, &none, &e) == DICEBENCH_FAILED);
  CHECK(std::string(e.message).find("level 2") != std::string::npos);
  CHECK(none.empty());

  const std::vector<dicebench_generation_request> requests{make_request(1, 2, 0), make_request(1, 1, 1),
                                                           make_request(1, 2, 1)};
  REQUIRE(api.prepare(model, requests.data(), requests.size(), &e) == DICEBENCH_OK);

  ResultCollector collector;
  REQUIRE(api.generate(model, requests.data(), requests.size(), &ResultCollector::sink, &collector, &e) ==
          DICEBENCH_OK);
  REQUIRE(collector.results.size() == 3);
  // A raw completion: the suite extracts, so the candidate is NULL.
  CHECK(collector.results[0].request_index == 0);
  CHECK(collector.results[0].completion == "Sure!\n```python\nclass ModelNew: pass\n```\n");
  CHECK_FALSE(collector.results[0].candidate);
  CHECK(nlohmann::json::parse(collector.results[0].stats_json) ==
        nlohmann::json{{"source", "replay"}, {"file", "level_1_problem_2_sample_0.txt"}, {"bytes", 41}});
  // A KernelBench kernel file: completion and candidate are both the file's text.
  CHECK(collector.results[1].request_index == 1);
  CHECK(collector.results[1].completion == "class ModelNew:  # kernel 1/1\n    pass\n");
  REQUIRE(collector.results[1].candidate);
  CHECK(*collector.results[1].candidate == collector.results[1].completion);
  CHECK(collector.results[2].completion == "raw 2/1");

  api.close(model);
}

TEST_CASE("replay plugin: prepare rejects requests without a file before anything is generated") {
  StubHost host;
  TempFolder folder;
  write_sample_folder(folder);
  std::string error;
  dicebench_model* model = open_replay(host, folder.path().string(), &error);
  REQUIRE_MESSAGE(model, error);
  const std::vector<dicebench_generation_request> requests{make_request(1, 1, 0), make_request(1, 1, 2),
                                                           make_request(1, 3, 0)};
  dicebench_error e{};
  CHECK(replay_api().prepare(model, requests.data(), requests.size(), &e) == DICEBENCH_FAILED);
  const std::string message = e.message;
  CHECK(message.find("lacks 2 of 3 requested samples") != std::string::npos);
  CHECK(message.find("level 1 problem 1 sample 2") != std::string::npos);
  CHECK(message.find("level 1 problem 3 sample 0") != std::string::npos);

  ResultCollector collector;  // generate reports the missing file too, if called anyway
  CHECK(replay_api().generate(model, requests.data(), requests.size(), &ResultCollector::sink, &collector, &e) ==
        DICEBENCH_FAILED);
  CHECK(std::string(e.message).find("level_1_problem_1_sample_2_kernel.py") != std::string::npos);
  CHECK(collector.results.size() == 1);
  replay_api().close(model);
}

TEST_CASE("replay plugin: generate stops between requests when the host cancels") {
  StubHost host;
  TempFolder folder;
  write_sample_folder(folder);
  std::string error;
  dicebench_model* model = open_replay(host, folder.path().string(), &error);
  REQUIRE_MESSAGE(model, error);
  const std::vector<dicebench_generation_request> requests{make_request(1, 1, 0), make_request(1, 1, 1),
                                                           make_request(1, 2, 0)};
  ResultCollector collector;
  collector.host = &host;
  collector.cancel_after = 1;
  dicebench_error e{};
  CHECK(replay_api().generate(model, requests.data(), requests.size(), &ResultCollector::sink, &collector, &e) ==
        DICEBENCH_CANCELLED);
  CHECK(collector.results.size() == 1);
  CHECK(host.cancel_polls >= 2);
  replay_api().close(model);
}

TEST_CASE("replay plugin: a file removed after open is an error naming it") {
  StubHost host;
  TempFolder folder;
  write_sample_folder(folder);
  std::string error;
  dicebench_model* model = open_replay(host, folder.path().string(), &error);
  REQUIRE_MESSAGE(model, error);
  std::filesystem::remove(folder.path() / "level_1_problem_1_sample_0_kernel.py");
  const std::vector<dicebench_generation_request> requests{make_request(1, 1, 0)};
  ResultCollector collector;
  dicebench_error e{};
  CHECK(replay_api().generate(model, requests.data(), requests.size(), &ResultCollector::sink, &collector, &e) ==
        DICEBENCH_FAILED);
  CHECK(std::string(e.message).find("level_1_problem_1_sample_0_kernel.py") != std::string::npos);
  CHECK(collector.results.empty());
  std::string described;
  CHECK(replay_api().describe(model, &append_text, &described, &e) == DICEBENCH_FAILED);
  replay_api().close(model);
}
