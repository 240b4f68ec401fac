// The dice-infill suite plugin: DICE's kernel-infilling task over a file in DICE's format
// (infill_items.hpp) that the user names. Each item is a problem whose reference is its
// pytorch_code; the model sees the prefix and suffix (the fill-in-the-middle chat prompt, or, for a
// model that fills spans natively, ABI 1.4's optional_infill: infill_prompt.hpp) and writes the
// middle; the candidate is prefix + middle + suffix, evaluated as any KernelBench candidate.
// Extraction knows its problem (ABI 1.3's optional_extract_problem; optional_extract_span for a span
// filled natively) and reports the middle's exact match and edit distance
// (dicebench/extraction_details.hpp).
//
// Settings (config section [dice-infill], or --set dice-infill.KEY=VALUE):
//   data   the items' JSON file (DICE's kernel_infilling_evaluation.json); the flag
//          --dice-infill-data, which this plugin declares, sets it too
#include "benchmarks/dice_infill/infill_answer.hpp"
#include "benchmarks/dice_infill/infill_items.hpp"
#include "benchmarks/dice_infill/infill_prompt.hpp"

#include <dicebench_build_info.h>
#include <dicebench/extraction_details.hpp>
#include <dicebench/plugin.hpp>
#include <nlohmann/json.hpp>

#include <memory>

namespace {

using namespace dicebench;
using sdk::str;

constexpr const char* kSuiteName = "dice-infill";
constexpr int kLevel = 1;  // the items are KernelBench-style problems of no stated level

struct Suite {
  std::vector<dice_infill::InfillItem> items;
  std::vector<std::string> names, paths;  // kept alive for dicebench_problem
  std::vector<std::string> befores;       // native_context_before per item, kept alive for dicebench_infill
  std::string settings_json;
};

const Suite& as_suite(const dicebench_suite* s) { return *reinterpret_cast<const Suite*>(s); }

const dice_infill::InfillItem& item_at(const Suite& suite, size_t index) {
  if (index >= suite.items.size()) throw sdk::Failure("problem index out of range");
  return suite.items[index];
}

dicebench_status open_suite(const dicebench_host_services* services, dicebench_str name, dicebench_suite** out,
                            dicebench_error* error) {
  return sdk::guard(error, [&] {
    const sdk::Host host(services);
    if (sdk::view(name) != kSuiteName)
      throw sdk::Failure("dice-infill plugin does not provide suite '" + std::string(sdk::view(name)) + "'");
    const std::string data = host.config("dice-infill.data").value_or("");
    if (data.empty())
      throw sdk::Failure(
          "dice-infill needs its items: --dice-infill-data PATH (DICE's kernel_infilling_evaluation.json format)");
    auto items = dice_infill::load_infill_items(data);
    if (!items) throw sdk::Failure(items.error().message);
    auto suite = std::make_unique<Suite>();
    suite->items = std::move(*items);
    for (const auto& item : suite->items) {
      suite->names.push_back("infill_" + std::to_string(item.id));
      suite->paths.push_back(data + "#" + std::to_string(item.id));
      suite->befores.push_back(dice_infill::native_context_before(item));
    }
    suite->settings_json = nlohmann::json{{"data", data},
                                          {"items", suite->items.size()},
                                          {"prompt", "fim_chat"},
                                          {"extract", "first"},
                                          {"candidate_python_modules", nlohmann::json::array()}}
                               .dump();
    *out = reinterpret_cast<dicebench_suite*>(suite.release());
    return DICEBENCH_OK;
  });
}

void close_suite(dicebench_suite* s) { delete reinterpret_cast<Suite*>(s); }

dicebench_status describe(const dicebench_suite* s, dicebench_text_sink sink, void* user, dicebench_error* error) {
  return sdk::guard(error, [&] {
    sdk::emit(sink, user, as_suite(s).settings_json);
    return DICEBENCH_OK;
  });
}

size_t problem_count(const dicebench_suite* s) { return as_suite(s).items.size(); }

dicebench_status problem(const dicebench_suite* s, size_t index, dicebench_problem* out, dicebench_error* error) {
  return sdk::guard(error, [&] {
    const Suite& suite = as_suite(s);
    const auto& item = item_at(suite, index);
    *out = {item.id,
            kLevel,
            str(suite.names[index]),
            str(suite.paths[index]),
            str(item.pytorch_code),
            str(item.content_hash)};
    return DICEBENCH_OK;
  });
}

dicebench_status build_prompt(const dicebench_suite* s, size_t index, dicebench_text_sink sink, void* user,
                              dicebench_error* error) {
  return sdk::guard(error, [&] {
    sdk::emit(sink, user, dice_infill::build_fim_prompt(item_at(as_suite(s), index)));
    return DICEBENCH_OK;
  });
}

// Without its problem the answer cannot be assembled: the host calls extract_problem instead.
dicebench_status extract(const dicebench_suite*, dicebench_str, dicebench_text_sink, void*, dicebench_error* error) {
  return sdk::guard(error, []() -> dicebench_status {
    throw sdk::Failure("dice-infill extracts per problem (ABI 1.3's optional_extract_problem)");
  });
}

// Sends what the answer measured, then its candidate (DICEBENCH_NOT_FOUND: none).
dicebench_status send_answer(const dice_infill::InfillAnswer& answer, dicebench_text_sink sink,
                             dicebench_text_sink details_sink, void* user) {
  nlohmann::json details;
  details[std::string(extraction::kInfillExactMatch)] = answer.exact_match;
  details[std::string(extraction::kInfillEditDistance)] = answer.edit_distance;
  sdk::emit(details_sink, user, details.dump());
  if (!answer.candidate) return DICEBENCH_NOT_FOUND;
  sdk::emit(sink, user, *answer.candidate);
  return DICEBENCH_OK;
}

dicebench_status extract_problem(const dicebench_suite* s, size_t index, dicebench_str completion,
                                 dicebench_text_sink sink, dicebench_text_sink details_sink, void* user,
                                 dicebench_error* error) {
  return sdk::guard(error, [&] {
    return send_answer(dice_infill::assemble_answer(item_at(as_suite(s), index), sdk::view(completion)), sink,
                       details_sink, user);
  });
}

dicebench_status infill(const dicebench_suite* s, size_t index, dicebench_infill* out, dicebench_error* error) {
  return sdk::guard(error, [&] {
    const Suite& suite = as_suite(s);
    const auto& item = item_at(suite, index);
    *out = {str(suite.befores[index]), str(item.suffix), item.middle.size()};
    return DICEBENCH_OK;
  });
}

dicebench_status extract_span(const dicebench_suite* s, size_t index, dicebench_str span, dicebench_text_sink sink,
                              dicebench_text_sink details_sink, void* user, dicebench_error* error) {
  return sdk::guard(error, [&] {
    return send_answer(dice_infill::assemble_span(item_at(as_suite(s), index), sdk::view(span)), sink, details_sink,
                       user);
  });
}

const dicebench_suite_api kApi = {sizeof(dicebench_suite_api),
                                  &open_suite,
                                  &close_suite,
                                  &describe,
                                  &problem_count,
                                  &problem,
                                  &build_prompt,
                                  &extract,
                                  nullptr,
                                  &extract_problem,
                                  nullptr,
                                  0,
                                  nullptr,
                                  &infill,
                                  &extract_span,
                                  nullptr};

const dicebench_provided_name kNames[] = {
    {str(kSuiteName),
     str("Kernel infilling (DICE's stage-1 task): write the masked middle of a ModelNew (--dice-infill-data)")},
};

const dicebench_option kOptions[] = {
    {str("dice-infill-data"), str("dice-infill.data"), str("PATH"),
     str("Infilling items: a JSON array of {id, pytorch_code, cuda_code, prefix, middle, suffix}")},
};

const dicebench_plugin_descriptor kDescriptor =
    sdk::descriptor(DICEBENCH_KIND_SUITE, kSuiteName, DICEBENCH_VERSION, DICEBENCH_GIT_SHA, kNames, &kApi, kOptions);

}  // namespace

DICEBENCH_PLUGIN_ENTRY(kDescriptor)
