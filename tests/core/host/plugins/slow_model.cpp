// A test-only model plugin ("test-slow"): answers every prompt with a fenced code block after a
// configurable delay, and can fail or omit the code block on chosen requests. It lets the CLI
// tests kill, interrupt and resume runs, and check how failures are stored.
// Settings: test-slow.delay_ms (per request), test-slow.fail_at (problem id that fails),
//           test-slow.no_block_at (problem id answered without a code block).
#include <dicebench/plugin.hpp>

#include <chrono>
#include <string>
#include <thread>

namespace {
using namespace dicebench;
using sdk::str;

struct Model {
  sdk::Host host{nullptr};
  int delay_ms = 0;
  long long fail_at = -1, no_block_at = -1;
};

long long setting(const sdk::Host& host, const char* key, long long fallback) {
  auto v = host.config(key);
  return v ? std::stoll(*v) : fallback;
}

dicebench_status open(const dicebench_host_services* services, dicebench_str, dicebench_str, dicebench_model** out,
                      dicebench_error* error) {
  return sdk::guard(error, [&] {
    auto* m = new Model{sdk::Host(services)};
    m->delay_ms = static_cast<int>(setting(m->host, "test-slow.delay_ms", 0));
    m->fail_at = setting(m->host, "test-slow.fail_at", -1);
    m->no_block_at = setting(m->host, "test-slow.no_block_at", -1);
    *out = reinterpret_cast<dicebench_model*>(m);
    return DICEBENCH_OK;
  });
}
void close(dicebench_model* m) { delete reinterpret_cast<Model*>(m); }
dicebench_status describe(const dicebench_model*, dicebench_text_sink sink, void* user, dicebench_error*) {
  sdk::emit(sink, user, R"({"model":"test-slow"})");
  return DICEBENCH_OK;
}
size_t preferred_batch(const dicebench_model*) { return 1; }
dicebench_status prepare(dicebench_model*, const dicebench_generation_request*, size_t, dicebench_error*) {
  return DICEBENCH_OK;
}
dicebench_status generate(dicebench_model* handle, const dicebench_generation_request* requests, size_t count,
                          dicebench_result_sink sink, void* user, dicebench_error* error) {
  auto* m = reinterpret_cast<Model*>(handle);
  for (size_t i = 0; i < count; ++i) {
    if (m->host.cancelled()) return DICEBENCH_CANCELLED;
    std::this_thread::sleep_for(std::chrono::milliseconds(m->delay_ms));
    const auto& r = requests[i];
    if (r.problem_id == m->fail_at) {
      sdk::set_error(error, "test-slow: failing on problem " + std::to_string(r.problem_id) + " as configured");
      return DICEBENCH_FAILED;
    }
    const std::string code = "# problem " + std::to_string(r.problem_id) + " sample " + std::to_string(r.sample_index) +
                             " seed " + std::to_string(r.seed) + "\nclass ModelNew: pass\n";
    const std::string completion =
        r.problem_id == m->no_block_at ? "I cannot do this." : "Here:\n```python\n" + code + "```\n";
    const std::string stats = R"({"delay_ms":)" + std::to_string(m->delay_ms) + "}";
    const dicebench_generation_result result{str(completion), str(stats), {nullptr, 0}};
    sink(user, i, &result);
  }
  return DICEBENCH_OK;
}

const dicebench_model_api kApi = {sizeof(dicebench_model_api),
                                  &open,
                                  &close,
                                  &describe,
                                  &preferred_batch,
                                  &prepare,
                                  &generate,
                                  nullptr,
                                  nullptr,
                                  nullptr};
const dicebench_provided_name kNames[] = {{str("test-slow"), str("test model: slow, scriptable failures")}};
const dicebench_plugin_descriptor kDescriptor = {DICEBENCH_ABI_MAJOR,
                                                 DICEBENCH_ABI_MINOR,
                                                 sizeof(dicebench_plugin_descriptor),
                                                 DICEBENCH_KIND_MODEL,
                                                 str("test-slow"),
                                                 str("1"),
                                                 str("test"),
                                                 kNames,
                                                 1,
                                                 &kApi,
                                                 nullptr,
                                                 0};
}  // namespace

DICEBENCH_PLUGIN_ENTRY(kDescriptor)
