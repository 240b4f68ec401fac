// The replay model plugin: serves "replay:<folder>", completions stored in a folder (see
// replay_folder.hpp), through the C ABI of plugin.h. A thin adapter: every call runs inside
// sdk::guard(), so no exception crosses the boundary.
#include "models/replay/replay_folder.hpp"

#include <dicebench_build_info.h>
#include <dicebench/plugin.hpp>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

using dicebench::replay::FileKind;
using dicebench::replay::ReplayFolder;
using dicebench::replay::SampleKey;
namespace sdk = dicebench::sdk;

// The opaque handle of plugin.h.
struct dicebench_model {
  sdk::Host host;
  ReplayFolder folder;
};

namespace {

constexpr size_t kPreferredBatch = 64;

std::string dump(const nlohmann::ordered_json& json) {
  return json.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

template <class T>
T value_or_throw(dicebench::Result<T>&& result) {
  if (!result) throw sdk::Failure(result.error().message);
  return std::move(result).value();
}

std::vector<SampleKey> keys_of(const dicebench_generation_request* requests, size_t count) {
  std::vector<SampleKey> keys;
  keys.reserve(count);
  for (size_t i = 0; i < count; ++i)
    keys.push_back(SampleKey{requests[i].level, requests[i].problem_id, requests[i].sample_index});
  return keys;
}

dicebench_status replay_open(const dicebench_host_services* services, dicebench_str name, dicebench_str argument,
                             dicebench_model** out, dicebench_error* error) {
  return sdk::guard(error, [&] {
    const std::string_view n = sdk::view(name);
    if (n != "replay" && n != "replay:")
      throw sdk::Failure("the replay plugin serves 'replay:<folder>', not '" + std::string(n) + "'");
    const std::string folder(sdk::view(argument));
    if (folder.empty())
      throw sdk::Failure("replay needs a folder: --model replay:<folder> (expected files named " +
                         std::string(dicebench::replay::kExpectedNames) + ")");
    sdk::Host host(services);
    ReplayFolder scanned = value_or_throw(ReplayFolder::open(folder));
    for (const std::string& ignored : scanned.ignored())
      host.log(DICEBENCH_LOG_DEBUG, "replay: ignoring " + (scanned.path() / ignored).string() +
                                        " (not a level_<L>_problem_<P>_sample_<S>_kernel.py or .txt file)");
    host.log(DICEBENCH_LOG_INFO,
             "replay: " + std::to_string(scanned.file_count()) + " stored samples in " + scanned.path().string());
    *out = new dicebench_model{host, std::move(scanned)};
    return DICEBENCH_OK;
  });
}

void replay_close(dicebench_model* model) { delete model; }

dicebench_status replay_describe(const dicebench_model* model, dicebench_text_sink sink, void* user,
                                 dicebench_error* error) {
  return sdk::guard(error, [&] {
    const nlohmann::ordered_json json = {{"model", "replay"},
                                         {"folder", model->folder.path().string()},
                                         {"files", model->folder.file_count()},
                                         {"content_sha256", value_or_throw(model->folder.content_sha256())}};
    sdk::emit(sink, user, dump(json));
    return DICEBENCH_OK;
  });
}

size_t replay_preferred_batch(const dicebench_model*) { return kPreferredBatch; }

dicebench_status replay_prepare(dicebench_model* model, const dicebench_generation_request* requests, size_t count,
                                dicebench_error* error) {
  return sdk::guard(error, [&] {
    const std::vector<SampleKey> keys = keys_of(requests, count);
    const auto available = model->folder.check_available(keys);
    if (!available) throw sdk::Failure(available.error().message);
    return DICEBENCH_OK;
  });
}

dicebench_status replay_generate(dicebench_model* model, const dicebench_generation_request* requests, size_t count,
                                 dicebench_result_sink sink, void* user, dicebench_error* error) {
  return sdk::guard(error, [&] {
    for (size_t i = 0; i < count; ++i) {
      if (model->host.cancelled()) {
        sdk::set_error(error, "replay: cancelled");
        return DICEBENCH_CANCELLED;
      }
      const SampleKey key{requests[i].level, requests[i].problem_id, requests[i].sample_index};
      const ReplayFolder::Sample sample = value_or_throw(model->folder.read(key));
      const std::string stats = dump({{"source", "replay"}, {"file", sample.file_name}, {"bytes", sample.text.size()}});
      dicebench_generation_result result{};
      result.completion = sdk::str(sample.text);
      result.stats_json = sdk::str(stats);
      // A KernelBench kernel file is the candidate already; a raw completion is extracted by the suite.
      result.optional_candidate = sample.kind == FileKind::kernel ? sdk::str(sample.text) : dicebench_str{nullptr, 0};
      sink(user, i, &result);
    }
    return DICEBENCH_OK;
  });
}

dicebench_status replay_stored_samples(const dicebench_model* model, int32_t level, dicebench_text_sink sink,
                                       void* user, dicebench_error* error) {
  return sdk::guard(error, [&] {
    nlohmann::ordered_json json = nlohmann::ordered_json::object();
    for (const auto& [problem, samples] : value_or_throw(model->folder.stored_samples(level)))
      json[std::to_string(problem)] = samples;
    sdk::emit(sink, user, dump(json));
    return DICEBENCH_OK;
  });
}

const dicebench_model_api kApi = {
    sizeof(dicebench_model_api),
    &replay_open,             // scans the folder
    &replay_close,            // frees the handle
    &replay_describe,         // folder, file count, content digest
    &replay_preferred_batch,  // 64 requests per call
    &replay_prepare,          // every request has a file
    &replay_generate,         // reads the files
    &replay_stored_samples,   // what the folder holds, per level
    nullptr,                  // optional_prepare_infill: stored completions are prompted answers
    nullptr,                  // optional_generate_infill
};

const dicebench_provided_name kProvides[] = {
    {sdk::str("replay:"), sdk::str("completions stored in a folder: KernelBench runs' *_kernel.py files or raw *.txt")},
};

const dicebench_plugin_descriptor kDescriptor =
    sdk::descriptor(DICEBENCH_KIND_MODEL, "replay", DICEBENCH_VERSION, DICEBENCH_GIT_SHA, kProvides, &kApi);

}  // namespace

DICEBENCH_PLUGIN_ENTRY(kDescriptor)
