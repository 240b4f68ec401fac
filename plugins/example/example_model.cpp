// The example model plugin: a minimal, complete dicebench model backend to copy when adding
// your own. It serves the model "example-echo", whose completion is a fenced Python block
// derived only from the request (the prompt's FNV-1a hash, the problem's name, the sample),
// so runs are reproducible and need nothing heavy.
//
// Everything crosses the boundary through the C ABI in <dicebench/plugin.h>; the header-only
// helpers of <dicebench/plugin.hpp> convert strings, read configuration, log, and turn C++
// exceptions into a status + one-line error (sdk::guard), since none may cross.
#include <dicebench/plugin.hpp>

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace sdk = dicebench::sdk;

// The opaque model handle of plugin.h: whatever state one opened model needs.
struct dicebench_model {
  sdk::Host host;      // the host's services: log, config, cancellation (valid until close)
  std::string prefix;  // text put before the code block, from the config key `example.prefix`
};

namespace {

// 64-bit FNV-1a: a tiny stand-in for whatever a real backend computes.
std::string fnv1a_hex(std::string_view text) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return hex;
}

// Minimal JSON string escaping, for describe() and the statistics.
std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char escaped[7];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
      out += escaped;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

// The completion for one request: deterministic from the request alone.
std::string complete(const dicebench_model& model, const dicebench_generation_request& request) {
  const std::string_view prompt = sdk::view(request.prompt);
  std::string text = model.prefix + "```python\n";
  text += "# example-echo: problem " + std::string(sdk::view(request.problem_name));
  text += " (level " + std::to_string(request.level) + ", id " + std::to_string(request.problem_id) + ")";
  text += ", sample " + std::to_string(request.sample_index) + "\n";
  text += "# prompt fnv1a64 " + fnv1a_hex(prompt) + " (" + std::to_string(prompt.size()) + " bytes)\n";
  text +=
      "import torch.nn as nn\n"
      "\n"
      "\n"
      "class ModelNew(nn.Module):\n"
      "    def __init__(self, *args, **kwargs):\n"
      "        super().__init__()\n"
      "        raise NotImplementedError(\"example-echo writes no kernels\")\n"
      "```\n";
  return text;
}

// open: called once per "--model example-echo". Read settings here and fail early, with one
// line saying what is wrong. `argument` is the text after ':' (this model takes none).
dicebench_status example_open(const dicebench_host_services* services, dicebench_str name, dicebench_str argument,
                              dicebench_model** out, dicebench_error* error) {
  return sdk::guard(error, [&] {
    if (sdk::view(name) != "example-echo") throw sdk::Failure("the example plugin serves 'example-echo' only");
    if (!sdk::view(argument).empty()) throw sdk::Failure("example-echo takes no argument");
    sdk::Host host(services);
    auto* model = new dicebench_model{host, host.config("example.prefix").value_or("")};
    host.log(DICEBENCH_LOG_DEBUG, "example-echo: opened");
    *out = model;
    return DICEBENCH_OK;
  });
}

// close: frees what open made. Never fails.
void example_close(dicebench_model* model) { delete model; }

// describe: every setting that changes completions, as one JSON object (stored with the run,
// and part of the key under which samples are cached).
dicebench_status example_describe(const dicebench_model* model, dicebench_text_sink sink, void* user,
                                  dicebench_error* error) {
  return sdk::guard(error, [&] {
    sdk::emit(sink, user, "{\"model\":\"example-echo\",\"prefix\":" + json_string(model->prefix) + "}");
    return DICEBENCH_OK;
  });
}

// preferred_batch: how many requests one generate() call should carry.
size_t example_preferred_batch(const dicebench_model*) { return 8; }

// prepare: sees every request of the run before anything is generated; reject bad input here.
dicebench_status example_prepare(dicebench_model*, const dicebench_generation_request* requests, size_t count,
                                 dicebench_error* error) {
  return sdk::guard(error, [&] {
    for (size_t i = 0; i < count; ++i)
      if (sdk::view(requests[i].prompt).empty())
        throw sdk::Failure("example-echo: empty prompt for problem " + std::to_string(requests[i].problem_id));
    return DICEBENCH_OK;
  });
}

// generate: one result per request, handed to the sink (which copies it before returning).
// Long work polls cancellation and stops with DICEBENCH_CANCELLED.
dicebench_status example_generate(dicebench_model* model, const dicebench_generation_request* requests, size_t count,
                                  dicebench_result_sink sink, void* user, dicebench_error* error) {
  return sdk::guard(error, [&] {
    for (size_t i = 0; i < count; ++i) {
      if (model->host.cancelled()) {
        sdk::set_error(error, "example-echo: cancelled");
        return DICEBENCH_CANCELLED;
      }
      const std::string completion = complete(*model, requests[i]);
      const std::string stats =
          "{\"source\":\"example-echo\",\"prompt_bytes\":" + std::to_string(sdk::view(requests[i].prompt).size()) + "}";
      dicebench_generation_result result{};
      result.completion = sdk::str(completion);
      result.stats_json = sdk::str(stats);
      result.optional_candidate = {nullptr, 0};  // NULL: let the suite extract the candidate from the completion
      sink(user, i, &result);
    }
    return DICEBENCH_OK;
  });
}

const dicebench_model_api kApi = {
    sizeof(dicebench_model_api),
    &example_open,
    &example_close,
    &example_describe,
    &example_preferred_batch,
    &example_prepare,
    &example_generate,
    nullptr,  // optional_stored_samples: only for models that serve stored completions (see replay)
    nullptr,  // optional_prepare_infill: only for models that fill a masked span natively (see local)
    nullptr,  // optional_generate_infill
};

// The names this plugin serves, each with one line for `dicebench list models`.
const dicebench_provided_name kProvides[] = {
    {sdk::str("example-echo"), sdk::str("example plugin: echoes a hash of the prompt in a code block")},
};

const dicebench_plugin_descriptor kDescriptor = sdk::descriptor(DICEBENCH_KIND_MODEL,
                                                                "example",  // the plugin's own name
                                                                "1.0.0",    // its version
                                                                "example",  // build id: your git sha and options
                                                                kProvides, &kApi);

}  // namespace

// The one exported symbol: dicebench_plugin_entry, returning the descriptor.
DICEBENCH_PLUGIN_ENTRY(kDescriptor)
