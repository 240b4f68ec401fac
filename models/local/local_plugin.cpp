// The local model plugin: serves dice-*, sdar-*, qwen3-* and cudallm-8b (model_catalog.hpp) through
// the C ABI of plugin.h, on the libtorch engine; the block-diffusion models also fill spans natively
// (ABI 1.4's infill calls). A thin adapter: every call runs inside
// sdk::guard(), so no exception crosses the boundary.
#include <dicebench_build_info.h>
#include <dicebench/plugin.hpp>

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "models/local/local_model.hpp"

using dicebench::local::LocalModel;
namespace sdk = dicebench::sdk;

// The opaque handle of plugin.h.
struct dicebench_model {
  sdk::Host host;
  std::string name;
  std::unique_ptr<LocalModel> model;
};

namespace {

template <class T>
T value_or_throw(dicebench::Result<T>&& result) {
  if (!result) throw sdk::Failure(result.error().message);
  return std::move(result).value();
}

void check(const dicebench::Result<void>& result) {
  if (!result) throw sdk::Failure(result.error().message);
}

std::string dump(const nlohmann::ordered_json& json) {
  return json.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

// As the host decides where to evaluate: a GPU is visible when nvidia-smi lists one.
bool gpu_visible() { return std::system("nvidia-smi -L > /dev/null 2>&1") == 0; }

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

dicebench_status local_open(const dicebench_host_services* services, dicebench_str name, dicebench_str argument,
                            dicebench_model** out, dicebench_error* error) {
  return sdk::guard(error, [&] {
    const std::string model_name(sdk::view(name));
    const auto* entry = dicebench::local::find_model(model_name);
    if (!entry) throw sdk::Failure("the local plugin does not serve '" + model_name + "'");
    if (!sdk::view(argument).empty()) throw sdk::Failure(model_name + " takes no argument");
    sdk::Host host(services);
    const dicebench::local::SettingLookup lookup = [&host](const std::string& key) { return host.config(key); };
    const bool gpu = !host.config(std::string(dicebench::local::kSection) + ".device") && gpu_visible();
    auto model = value_or_throw(LocalModel::open(*entry, lookup, gpu));
    const auto& settings = model->settings();
    host.log(DICEBENCH_LOG_INFO,
             fmt::format("{}: {} (preset {}, {} {}, batch {})", model_name, model->folder().string(), settings.preset,
                         settings.device, dicebench::engine::dtype_name(settings.dtype), settings.batch));
    *out = new dicebench_model{host, model_name, std::move(model)};
    return DICEBENCH_OK;
  });
}

void local_close(dicebench_model* model) { delete model; }

dicebench_status local_describe(const dicebench_model* model, dicebench_text_sink sink, void* user,
                                dicebench_error* error) {
  return sdk::guard(error, [&] {
    sdk::emit(sink, user, dump(model->model->description()));
    return DICEBENCH_OK;
  });
}

size_t local_preferred_batch(const dicebench_model* model) { return model->model->settings().batch; }

// Loads the weights once, logging how long it took.
void load_weights(dicebench_model* model) {
  if (model->model->engine_loaded()) return;
  const auto start = std::chrono::steady_clock::now();
  check(model->model->load_engine());
  model->host.log(DICEBENCH_LOG_INFO, fmt::format("{}: weights loaded in {:.1f} s", model->name, seconds_since(start)));
}

// Every prompt fits the context, then the weights are loaded: both before anything is stored.
dicebench_status local_prepare(dicebench_model* model, const dicebench_generation_request* requests, size_t count,
                               dicebench_error* error) {
  return sdk::guard(error, [&] {
    for (size_t i = 0; i < count; ++i)
      if (auto ids = model->model->prompt_tokens(sdk::view(requests[i].prompt)); !ids)
        throw sdk::Failure(fmt::format("{}: problem {} ({}): {}", model->name, requests[i].problem_id,
                                       sdk::view(requests[i].problem_name), ids.error().message));
    load_weights(model);
    return DICEBENCH_OK;
  });
}

// Hands a generated batch's completions to the host, after a line on how fast it went.
void send_batch(dicebench_model* model, const dicebench::local::GeneratedBatch& batch, const char* what,
                dicebench_result_sink sink, void* user) {
  model->host.log(DICEBENCH_LOG_INFO,
                  fmt::format("{}: {} {}, {} new tokens in {:.1f} s ({:.1f} tokens/s, {} forward passes)", model->name,
                              batch.completions.size(), what, batch.new_tokens, batch.seconds,
                              static_cast<double>(batch.new_tokens) / batch.seconds, batch.forward_passes));
  const auto& completions = batch.completions;
  for (size_t i = 0; i < completions.size(); ++i) {
    const std::string stats = dump(completions[i].stats);
    dicebench_generation_result result{};
    result.completion = sdk::str(completions[i].answer.text);
    result.stats_json = sdk::str(stats);
    result.optional_candidate = {nullptr, 0};  // the suite extracts the candidate
    sink(user, i, &result);
  }
}

dicebench_status cancelled(dicebench_error* error) {
  sdk::set_error(error, "cancelled");
  return DICEBENCH_CANCELLED;
}

dicebench_status local_generate(dicebench_model* model, const dicebench_generation_request* requests, size_t count,
                                dicebench_result_sink sink, void* user, dicebench_error* error) {
  return sdk::guard(error, [&] {
    if (model->host.cancelled()) return cancelled(error);
    std::vector<std::string> prompts;
    for (size_t i = 0; i < count; ++i) prompts.emplace_back(sdk::view(requests[i].prompt));
    // One seed per engine batch: the host's seed for the batch's first request.
    send_batch(model, value_or_throw(model->model->generate(prompts, count ? requests[0].seed : 0)), "prompts", sink,
               user);
    return DICEBENCH_OK;
  });
}

std::vector<dicebench::local::SpanToFill> spans_of(const dicebench_infill* infill, size_t count) {
  std::vector<dicebench::local::SpanToFill> spans;
  for (size_t i = 0; i < count; ++i)
    spans.push_back({sdk::view(infill[i].before), sdk::view(infill[i].after), infill[i].reference_span_bytes});
  return spans;
}

// Block-diffusion models fill spans natively; the autoregressive ones are prompted as usual.
dicebench_status local_prepare_infill(dicebench_model* model, const dicebench_generation_request* requests,
                                      const dicebench_infill* infill, size_t count, dicebench_error* error) {
  return sdk::guard(error, [&] {
    if (!model->model->fills_spans()) return DICEBENCH_NOT_FOUND;
    const auto spans = spans_of(infill, count);
    for (size_t i = 0; i < count; ++i)
      if (auto row = model->model->infill_row(spans[i]); !row)
        throw sdk::Failure(fmt::format("{}: problem {} ({}): {}", model->name, requests[i].problem_id,
                                       sdk::view(requests[i].problem_name), row.error().message));
    load_weights(model);
    return DICEBENCH_OK;
  });
}

dicebench_status local_generate_infill(dicebench_model* model, const dicebench_generation_request* requests,
                                       const dicebench_infill* infill, size_t count, dicebench_result_sink sink,
                                       void* user, dicebench_error* error) {
  return sdk::guard(error, [&] {
    if (model->host.cancelled()) return cancelled(error);
    send_batch(model, value_or_throw(model->model->fill_spans(spans_of(infill, count), count ? requests[0].seed : 0)),
               "spans", sink, user);
    return DICEBENCH_OK;
  });
}

const dicebench_model_api kApi = {
    sizeof(dicebench_model_api),
    &local_open,             // finds the folder, reads config, tokenizer, settings
    &local_close,            // frees the model (and the engine's memory)
    &local_describe,         // name, folder identity, resolved settings
    &local_preferred_batch,  // local.batch
    &local_prepare,          // prompts fit the context; loads the weights
    &local_generate,         // one engine batch per call
    nullptr,                 // generates; serves no stored samples
    &local_prepare_infill,   // block diffusion fills spans natively: they fit the context; loads the weights
    &local_generate_infill,  // one engine batch of spans per call
};

// One entry per catalog name (built once, pointing into the catalog's static strings).
const std::vector<dicebench_provided_name>& provided_names() {
  static const std::vector<dicebench_provided_name> names = [] {
    std::vector<dicebench_provided_name> list;
    for (const auto& entry : dicebench::local::model_catalog())
      list.push_back({sdk::str(entry.name), sdk::str(entry.summary)});
    return list;
  }();
  return names;
}

const dicebench_plugin_descriptor& descriptor() {
  static const dicebench_plugin_descriptor value =
      sdk::descriptor(DICEBENCH_KIND_MODEL, "local", DICEBENCH_VERSION, DICEBENCH_GIT_SHA, provided_names(), &kApi);
  return value;
}

}  // namespace

DICEBENCH_PLUGIN_ENTRY(descriptor())
