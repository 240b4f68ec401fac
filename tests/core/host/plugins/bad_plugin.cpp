// Deliberately broken plugins for the loader's error tests; BAD_CASE picks the defect:
//   1 wrong ABI major, 2 no entry symbol, 3 wrong kind (declares a suite in a model file),
//   4 unresolved symbol, 5 a valid model plugin providing "dup-model" (built twice: duplicate),
//   6 a model plugin declaring a command-line option (only suites may).
#include <dicebench/plugin.hpp>

namespace {
using dicebench::sdk::str;

dicebench_status open(const dicebench_host_services*, dicebench_str, dicebench_str, dicebench_model**,
                      dicebench_error*) {
  return DICEBENCH_FAILED;
}
void close(dicebench_model*) {}
dicebench_status describe(const dicebench_model*, dicebench_text_sink, void*, dicebench_error*) { return DICEBENCH_OK; }
size_t preferred_batch(const dicebench_model*) { return 1; }
dicebench_status prepare(dicebench_model*, const dicebench_generation_request*, size_t, dicebench_error*) {
  return DICEBENCH_OK;
}
dicebench_status generate(dicebench_model*, const dicebench_generation_request*, size_t, dicebench_result_sink, void*,
                          dicebench_error*) {
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
const dicebench_provided_name kNames[] = {{str(BAD_PROVIDES), str("broken on purpose")}};

#if BAD_CASE == 1
constexpr uint32_t kMajor = 99;
#else
constexpr uint32_t kMajor = DICEBENCH_ABI_MAJOR;
#endif
#if BAD_CASE == 3
constexpr dicebench_kind kKind = DICEBENCH_KIND_SUITE;
#else
constexpr dicebench_kind kKind = DICEBENCH_KIND_MODEL;
#endif
#if BAD_CASE == 6
const dicebench_option kOptions[] = {{str("model-greeting"), str(BAD_PROVIDES ".greeting"), str("TEXT"), str("")}};
const dicebench_plugin_descriptor kDescriptor = {kMajor,
                                                 DICEBENCH_ABI_MINOR,
                                                 sizeof(dicebench_plugin_descriptor),
                                                 kKind,
                                                 str(BAD_PROVIDES),
                                                 str("1"),
                                                 str("test"),
                                                 kNames,
                                                 1,
                                                 &kApi,
                                                 kOptions,
                                                 1};
#else
const dicebench_plugin_descriptor kDescriptor = {
    kMajor,  0, sizeof(dicebench_plugin_descriptor), kKind, str(BAD_PROVIDES), str("1"), str("test"), kNames, 1, &kApi,
    nullptr, 0};
#endif
}  // namespace

#if BAD_CASE == 4
extern "C" int dicebench_test_symbol_nobody_defines(void);
DICEBENCH_EXPORT const dicebench_plugin_descriptor* dicebench_plugin_entry(void) {
  return dicebench_test_symbol_nobody_defines() ? &kDescriptor : nullptr;
}
#elif BAD_CASE == 2
DICEBENCH_EXPORT const dicebench_plugin_descriptor* some_other_symbol(void) { return &kDescriptor; }
#else
DICEBENCH_PLUGIN_ENTRY(kDescriptor)
#endif
