// Test-only suite plugins that declare command-line options (ABI 1.2); OPTION_CASE picks which:
//   0 "testopts": suite "test-options" (two tiny problems), declares --test-greeting for its setting
//     testopts.greeting, which it logs when opened and reports in its settings (describe)
//   1 "testclash": suite "test-clash", declares --test-greeting too (two plugins, one flag)
//   2 "testseed": suite "test-seed", declares --seed (a flag of `dicebench run` itself)
//   3 a flag that is not lowercase, 4 a setting outside the plugin's section (eval.device),
//   5 one flag declared twice: refused at load
//   6 an ABI 1.1 descriptor (shorter, without the options) whose options must be ignored
#include <dicebench/plugin.hpp>

#include <cstddef>
#include <string>

namespace {
using namespace dicebench;
using sdk::str;

struct Suite {
  std::string greeting;
  std::string settings_json;
};

dicebench_status open(const dicebench_host_services* services, dicebench_str name, dicebench_suite** out,
                      dicebench_error* error) {
  return sdk::guard(error, [&] {
    const sdk::Host host(services);
    auto* suite = new Suite{host.config(PLUGIN_NAME ".greeting").value_or(""), ""};
    host.log(DICEBENCH_LOG_INFO, std::string(sdk::view(name)) + ": greeting '" + suite->greeting + "'");
    suite->settings_json = "{\"greeting\":\"" + suite->greeting + "\"}";  // the tests' greetings need no escaping
    *out = reinterpret_cast<dicebench_suite*>(suite);
    return DICEBENCH_OK;
  });
}
void close(dicebench_suite* s) { delete reinterpret_cast<Suite*>(s); }
dicebench_status describe(const dicebench_suite* s, dicebench_text_sink sink, void* user, dicebench_error*) {
  sdk::emit(sink, user, reinterpret_cast<const Suite*>(s)->settings_json);
  return DICEBENCH_OK;
}
size_t problem_count(const dicebench_suite*) { return 2; }
dicebench_status problem(const dicebench_suite*, size_t index, dicebench_problem* out, dicebench_error*) {
  static const char* const kNames[] = {"First", "Second"};
  *out = {
      static_cast<int64_t>(index + 1), 1,
      str(kNames[index % 2]),          str("none.py"),
      str("class Model: pass\n"),      str("sha256:0000000000000000000000000000000000000000000000000000000000000000")};
  return DICEBENCH_OK;
}
dicebench_status build_prompt(const dicebench_suite*, size_t index, dicebench_text_sink sink, void* user,
                              dicebench_error*) {
  sdk::emit(sink, user, "Write problem " + std::to_string(index + 1));
  return DICEBENCH_OK;
}
// The first ```python block.
dicebench_status extract(const dicebench_suite*, dicebench_str completion, dicebench_text_sink sink, void* user,
                         dicebench_error*) {
  const std::string_view text = sdk::view(completion), fence = "```python\n";
  const size_t start = text.find(fence);
  if (start == std::string_view::npos) return DICEBENCH_NOT_FOUND;
  const size_t end = text.find("```", start + fence.size());
  if (end == std::string_view::npos) return DICEBENCH_NOT_FOUND;
  sdk::emit(sink, user, text.substr(start + fence.size(), end - start - fence.size()));
  return DICEBENCH_OK;
}

const dicebench_suite_api kApi = {sizeof(dicebench_suite_api),
                                  &open,
                                  &close,
                                  &describe,
                                  &problem_count,
                                  &problem,
                                  &build_prompt,
                                  &extract,
                                  nullptr,
                                  nullptr,
                                  nullptr,
                                  0,
                                  nullptr,
                                  nullptr,
                                  nullptr,
                                  nullptr};
const dicebench_provided_name kNames[] = {{str(PROVIDES), str("test suite declaring options")}};

#if OPTION_CASE == 2
const dicebench_option kOptions[] = {{str("seed"), str("testseed.seed"), str("N"), str("clashes with run's --seed")}};
#elif OPTION_CASE == 3
const dicebench_option kOptions[] = {{str("Test_Greeting"), str(PLUGIN_NAME ".greeting"), str("TEXT"), str("")}};
#elif OPTION_CASE == 4
const dicebench_option kOptions[] = {{str("test-device"), str("eval.device"), str("DEVICE"), str("")}};
#elif OPTION_CASE == 5
const dicebench_option kOptions[] = {{str("test-greeting"), str(PLUGIN_NAME ".greeting"), str("TEXT"), str("")},
                                     {str("test-greeting"), str(PLUGIN_NAME ".other"), str("TEXT"), str("")}};
#else
const dicebench_option kOptions[] = {{str("test-greeting"), str(PLUGIN_NAME ".greeting"), str("TEXT"),
                                      str("A greeting the suite reports in its settings")}};
#endif

#if OPTION_CASE == 6
// As a plugin built against ABI 1.1 lays it out: the host must not read past struct_size.
const dicebench_plugin_descriptor kDescriptor = {DICEBENCH_ABI_MAJOR,
                                                 1,
                                                 offsetof(dicebench_plugin_descriptor, optional_options),
                                                 DICEBENCH_KIND_SUITE,
                                                 str(PLUGIN_NAME),
                                                 str("1"),
                                                 str("test"),
                                                 kNames,
                                                 1,
                                                 &kApi,
                                                 kOptions,
                                                 1};
#else
const dicebench_plugin_descriptor kDescriptor =
    sdk::descriptor(DICEBENCH_KIND_SUITE, PLUGIN_NAME, "1", "test", kNames, &kApi, kOptions);
#endif
}  // namespace

DICEBENCH_PLUGIN_ENTRY(kDescriptor)
