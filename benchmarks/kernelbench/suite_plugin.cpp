// The KernelBench suite plugin: suites kernelbench-l1 ... kernelbench-l4, and kernelbench (levels
// 1-3, and 4 where the checkout has level4/, in one run), over a KernelBench checkout the user
// names, with prompts from KernelBench's prompt files, first-code-block extraction, and a review of
// each candidate (the flag backend_unused: backend_check.hpp, declared with the modules candidates
// import in the ABI 1.3 fields). Adapts the kernelbench library to the
// plugin C ABI.
//
// Settings (config section [kernelbench], or --set kernelbench.KEY=VALUE):
//   root            KernelBench checkout or its folder holding level1/... (else $DICEBENCH_KERNELBENCH_ROOT);
//                   the flag --kernelbench-root, which this plugin declares, sets it too
//   prompt          zero_shot | one_shot (default) | few_shot | template
//   backend, precision, prompts_dir       for the prompts.toml styles
//   template, example_arch, example_new_arch   for the template style
//   extract         first (default) | last code block
#include "benchmarks/kernelbench/backend_check.hpp"
#include "benchmarks/kernelbench/backends.hpp"
#include "benchmarks/kernelbench/extract.hpp"
#include "benchmarks/kernelbench/locate.hpp"
#include "benchmarks/kernelbench/problems.hpp"
#include "benchmarks/kernelbench/prompts.hpp"

#include <dicebench_build_info.h>
#include <dicebench/plugin.hpp>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <memory>

namespace {

using namespace dicebench;
using sdk::str;

// The whole benchmark: what `kernelbench` covers.
constexpr const char* kWholeBenchmark = "kernelbench";

struct Suite {
  std::string name;
  std::vector<int> levels;
  std::vector<kernelbench::Problem> problems;
  std::vector<std::string> paths;  // problem paths as strings, kept alive for dicebench_problem
  std::optional<kernelbench::PromptBuilder> prompts;
  kernelbench::Which extract_which = kernelbench::Which::First;
  const kernelbench::KernelBackend* backend = nullptr;  // the language candidates are asked for
  std::string settings_json;
};

template <class T>
T value_or_fail(Result<T> result) {
  if (!result) throw sdk::Failure(result.error().message);
  return std::move(result).value();
}

dicebench_status open_suite(const dicebench_host_services* services, dicebench_str name, dicebench_suite** out,
                            dicebench_error* error) {
  return sdk::guard(error, [&] {
    const sdk::Host host(services);
    auto suite = std::make_unique<Suite>();
    suite->name = std::string(sdk::view(name));
    const std::string prefix = "kernelbench-l";
    const bool whole = suite->name == kWholeBenchmark;
    if (!whole && (!suite->name.starts_with(prefix) || suite->name.size() != prefix.size() + 1 ||
                   suite->name.back() < '1' || suite->name.back() > '4'))
      throw sdk::Failure("kernelbench plugin does not provide suite '" + suite->name + "'");

    std::string root = host.config("kernelbench.root").value_or("");
    if (root.empty())
      if (const char* env = std::getenv("DICEBENCH_KERNELBENCH_ROOT")) root = env;
    const auto levels_root = value_or_fail(kernelbench::locate_levels_root(root));
    if (whole) {
      suite->levels = {1, 2, 3};
      std::error_code ec;
      if (std::filesystem::is_directory(levels_root / "level4", ec)) suite->levels.push_back(4);
    } else {
      suite->levels = {suite->name.back() - '0'};
    }
    for (const int level : suite->levels) {
      auto problems = value_or_fail(kernelbench::load_level(levels_root, level));
      if (problems.empty())
        throw sdk::Failure("no problem files (<id>_<Name>.py) in " +
                           (levels_root / ("level" + std::to_string(level))).string());
      for (auto& p : problems) suite->problems.push_back(std::move(p));
    }
    for (const auto& p : suite->problems) suite->paths.push_back(p.path.string());

    kernelbench::PromptOptions options;
    options.style = host.config("kernelbench.prompt").value_or(options.style);
    options.backend = host.config("kernelbench.backend").value_or(options.backend);
    options.precision = host.config("kernelbench.precision").value_or(options.precision);
    options.prompts_dir = host.config("kernelbench.prompts_dir").value_or("");
    options.template_file = host.config("kernelbench.template").value_or("");
    options.example_arch = host.config("kernelbench.example_arch").value_or("");
    options.example_new_arch = host.config("kernelbench.example_new_arch").value_or("");
    if (!options.template_file.empty() && !host.config("kernelbench.prompt")) options.style = "template";
    const kernelbench::KernelBackend* backend = kernelbench::find_backend(options.backend);
    if (backend != nullptr && !backend->refused.empty())
      throw sdk::Failure("kernelbench.backend=" + options.backend + " cannot be evaluated: " +
                         std::string(backend->refused) + "; choose cuda, triton, cute or tilelang");
    suite->prompts.emplace(value_or_fail(kernelbench::PromptBuilder::create(options, levels_root)));
    suite->backend = backend;

    const std::string which = host.config("kernelbench.extract").value_or("first");
    if (which == "last")
      suite->extract_which = kernelbench::Which::Last;
    else if (which != "first")
      throw sdk::Failure("kernelbench.extract must be 'first' or 'last', not '" + which + "'");

    nlohmann::json settings = nlohmann::json::parse(suite->prompts->describe());
    settings["levels_root"] = levels_root.string();
    if (whole)
      settings["levels"] = suite->levels;
    else
      settings["level"] = suite->levels.front();
    settings["problems"] = suite->problems.size();
    settings["extract"] = which;
    suite->settings_json = settings.dump();
    *out = reinterpret_cast<dicebench_suite*>(suite.release());
    return DICEBENCH_OK;
  });
}

const Suite& as_suite(const dicebench_suite* s) { return *reinterpret_cast<const Suite*>(s); }

void close_suite(dicebench_suite* s) { delete reinterpret_cast<Suite*>(s); }

dicebench_status describe(const dicebench_suite* s, dicebench_text_sink sink, void* user, dicebench_error* error) {
  return sdk::guard(error, [&] {
    sdk::emit(sink, user, as_suite(s).settings_json);
    return DICEBENCH_OK;
  });
}

size_t problem_count(const dicebench_suite* s) { return as_suite(s).problems.size(); }

dicebench_status problem(const dicebench_suite* s, size_t index, dicebench_problem* out, dicebench_error* error) {
  return sdk::guard(error, [&] {
    const Suite& suite = as_suite(s);
    if (index >= suite.problems.size()) throw sdk::Failure("problem index out of range");
    const auto& p = suite.problems[index];
    *out = {p.id, p.level, str(p.name), str(suite.paths[index]), str(p.source), str(p.content_hash)};
    return DICEBENCH_OK;
  });
}

dicebench_status build_prompt(const dicebench_suite* s, size_t index, dicebench_text_sink sink, void* user,
                              dicebench_error* error) {
  return sdk::guard(error, [&] {
    const Suite& suite = as_suite(s);
    if (index >= suite.problems.size()) throw sdk::Failure("problem index out of range");
    sdk::emit(sink, user, value_or_fail(suite.prompts->build(suite.problems[index])));
    return DICEBENCH_OK;
  });
}

dicebench_status extract(const dicebench_suite* s, dicebench_str completion, dicebench_text_sink sink, void* user,
                         dicebench_error* error) {
  return sdk::guard(error, [&] {
    auto candidate = kernelbench::extract_candidate(sdk::view(completion), as_suite(s).extract_which);
    if (!candidate) return DICEBENCH_NOT_FOUND;
    sdk::emit(sink, user, *candidate);
    return DICEBENCH_OK;
  });
}

// The review reads the candidate alone: whether it uses the backend the prompt asked for.
void review_candidate(const Suite& suite, dicebench_str candidate, dicebench_flag_sink sink, void* user) {
  if (suite.backend == nullptr) return;  // a prompts.toml backend this plugin does not know
  if (const auto why = kernelbench::backend_unused(*suite.backend, sdk::view(candidate))) {
    const std::string detail = "asked for " + std::string(suite.backend->name) + ": " + *why;
    sink(user, str(kernelbench::kBackendUnusedFlag), str(detail));
  }
}

dicebench_status review(const dicebench_suite* s, size_t index, dicebench_str candidate, dicebench_flag_sink sink,
                        void* user, dicebench_error* error) {
  return sdk::guard(error, [&] {
    const Suite& suite = as_suite(s);
    if (index >= suite.problems.size()) throw sdk::Failure("problem index out of range");
    review_candidate(suite, candidate, sink, user);
    return DICEBENCH_OK;
  });
}

// A problem from elsewhere (an RL task set written as KernelBench problems) is reviewed alike.
dicebench_status review_source(const dicebench_suite* s, dicebench_str /*problem_source*/, dicebench_str candidate,
                               dicebench_flag_sink sink, void* user, dicebench_error* error) {
  return sdk::guard(error, [&] {
    review_candidate(as_suite(s), candidate, sink, user);
    return DICEBENCH_OK;
  });
}

// What the candidates import besides torch (the backend's module): the host checks that the
// workers' Python has it before anything is evaluated.
dicebench_status candidate_modules(const dicebench_suite* s, dicebench_text_sink sink, void* user,
                                   dicebench_error* error) {
  return sdk::guard(error, [&] {
    const Suite& suite = as_suite(s);
    if (suite.backend != nullptr && !suite.backend->python_module.empty())
      sdk::emit(sink, user, suite.backend->python_module);
    return DICEBENCH_OK;
  });
}

// The flags review() may report.
const dicebench_str kReviewFlags[] = {str(kernelbench::kBackendUnusedFlag)};

const dicebench_suite_api kApi = {sizeof(dicebench_suite_api),
                                  &open_suite,
                                  &close_suite,
                                  &describe,
                                  &problem_count,
                                  &problem,
                                  &build_prompt,
                                  &extract,
                                  &review,
                                  nullptr,
                                  kReviewFlags,
                                  std::size(kReviewFlags),
                                  &candidate_modules,
                                  nullptr,
                                  nullptr,
                                  &review_source};

const dicebench_provided_name kNames[] = {
    {str("kernelbench-l1"), str("KernelBench level 1: single operators (100 problems)")},
    {str("kernelbench-l2"), str("KernelBench level 2: operator fusion (100 problems)")},
    {str("kernelbench-l3"), str("KernelBench level 3: full architectures (50 problems)")},
    {str("kernelbench-l4"), str("KernelBench level 4: Hugging Face models (needs a checkout with level4/)")},
    {str(kWholeBenchmark), str("KernelBench levels 1-3 in one run, and level 4 where the checkout has level4/")},
};

// The flags `dicebench run` takes for this suite.
const dicebench_option kOptions[] = {
    {str("kernelbench-root"), str("kernelbench.root"), str("PATH"),
     str("KernelBench checkout (or its folder holding level1/...)")},
};

const dicebench_plugin_descriptor kDescriptor =
    sdk::descriptor(DICEBENCH_KIND_SUITE, "kernelbench", DICEBENCH_VERSION, DICEBENCH_GIT_SHA, kNames, &kApi, kOptions);

}  // namespace

DICEBENCH_PLUGIN_ENTRY(kDescriptor)
