// A suite opened through its plugin's C table.
#include "core/host/suite_session.hpp"

#include "core/host/plugin_registry.hpp"

#include "core/host/plugin_call.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace dicebench::host {

Result<SuiteSession> SuiteSession::open_named(const PluginRegistry& registry, const std::string& name,
                                              const HostServices& services, LoadedPlugin& plugin) {
  auto resolved = registry.resolve(DICEBENCH_KIND_SUITE, name);
  if (!resolved) return resolved.error();
  auto loaded = registry.load(*resolved->plugin);
  if (!loaded) return loaded.error();
  plugin = std::move(*loaded);
  return open(plugin, resolved->name, services);
}

Result<SuiteSession> SuiteSession::open(const LoadedPlugin& plugin, const std::string& name,
                                        const HostServices& services) {
  if (plugin.info.kind != DICEBENCH_KIND_SUITE)
    return make_error(fmt::format("{} is not a suite plugin", plugin.info.path));
  SuiteSession session;
  session.api_ = static_cast<const dicebench_suite_api*>(plugin.api);
  session.name_ = name;
  session.plugin_path_ = plugin.info.path;
  dicebench_error error{};
  dicebench_suite* handle = nullptr;
  const dicebench_status status = session.api_->open(services.table(), {name.data(), name.size()}, &handle, &error);
  if (status != DICEBENCH_OK) return plugin_error(plugin.info.path, "open", status, error);
  session.handle_ = std::unique_ptr<dicebench_suite, SuiteCloser>(handle, SuiteCloser{session.api_});
  const dicebench_suite_api* api = session.api_;
  if (DICEBENCH_TABLE_HOLDS(api, dicebench_suite_api, optional_review_flags_count) &&
      api->optional_review_flags != nullptr) {
    std::vector<EvaluationFlag> declared;
    for (size_t i = 0; i < api->optional_review_flags_count; ++i) {
      const std::string flag = str_of(api->optional_review_flags[i]);
      const auto parsed = parse_flag(flag);
      if (!parsed)
        return make_error(
            fmt::format("{}: declares the review flag '{}', which is not an evaluation flag", plugin.info.path, flag));
      declared.push_back(*parsed);
    }
    session.review_flags_ = std::move(declared);
  }
  const size_t count = session.api_->problem_count(handle);
  session.problems_.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    dicebench_problem p{};
    const dicebench_status s = session.api_->problem(handle, i, &p, &error);
    if (s != DICEBENCH_OK) return plugin_error(plugin.info.path, "problem", s, error);
    session.problems_.push_back(
        {p.id, p.level, str_of(p.name), str_of(p.path), str_of(p.source), str_of(p.content_hash)});
  }
  return session;
}

Result<std::string> SuiteSession::describe() const {
  std::string out;
  dicebench_error error{};
  const dicebench_status s = api_->describe(handle_.get(), &append_to_string, &out, &error);
  if (s != DICEBENCH_OK) return plugin_error(plugin_path_, "describe", s, error);
  return out;
}

Result<std::string> SuiteSession::build_prompt(size_t index) const {
  std::string out;
  dicebench_error error{};
  const dicebench_status s = api_->build_prompt(handle_.get(), index, &append_to_string, &out, &error);
  if (s != DICEBENCH_OK) return plugin_error(plugin_path_, "build_prompt", s, error);
  return out;
}

namespace {

// What an extraction call sent to its two sinks.
struct ExtractionSinks {
  std::string candidate, details;
  static void candidate_sink(void* user, dicebench_str t) {
    static_cast<ExtractionSinks*>(user)->candidate.append(str_of(t));
  }
  static void details_sink(void* user, dicebench_str t) {
    static_cast<ExtractionSinks*>(user)->details.append(str_of(t));
  }
};

// The extraction a call's status and sinks make; `call` names it in errors.
Result<SuiteSession::Extraction> extraction_of(const std::string& plugin_path, const char* call,
                                               dicebench_status status, const dicebench_error& error,
                                               ExtractionSinks&& out) {
  if (status != DICEBENCH_OK && status != DICEBENCH_NOT_FOUND) return plugin_error(plugin_path, call, status, error);
  SuiteSession::Extraction extraction;
  if (status == DICEBENCH_OK) extraction.candidate = std::move(out.candidate);
  if (!out.details.empty()) {
    const nlohmann::json details = nlohmann::json::parse(out.details, nullptr, /*allow_exceptions=*/false);
    if (!details.is_object())
      return make_error(fmt::format("{}: {} sent details that are not a JSON object: {}", plugin_path, call,
                                    out.details.substr(0, 200)));
    extraction.details_json = details.dump();
  }
  return extraction;
}

}  // namespace

Result<SuiteSession::Extraction> SuiteSession::extract(std::optional<size_t> index,
                                                       const std::string& completion) const {
  ExtractionSinks out;
  dicebench_error error{};
  const dicebench_str text{completion.data(), completion.size()};
  const bool per_problem = DICEBENCH_TABLE_HOLDS(api_, dicebench_suite_api, optional_extract_problem) &&
                           api_->optional_extract_problem != nullptr;
  if (per_problem && !index)
    return make_error(ErrorKind::bad_input,
                      fmt::format("suite {} extracts a candidate only for its own problems (its answers depend on "
                                  "the problem); give the problem by its id",
                                  name_));
  const dicebench_status s =
      per_problem ? api_->optional_extract_problem(handle_.get(), *index, text, &ExtractionSinks::candidate_sink,
                                                   &ExtractionSinks::details_sink, &out, &error)
                  : api_->extract(handle_.get(), text, &ExtractionSinks::candidate_sink, &out, &error);
  return extraction_of(plugin_path_, "extract", s, error, std::move(out));
}

bool SuiteSession::offers_infill() const {
  return DICEBENCH_TABLE_HOLDS(api_, dicebench_suite_api, optional_extract_span) && api_->optional_infill != nullptr &&
         api_->optional_extract_span != nullptr;
}

Result<Infill> SuiteSession::infill(size_t index) const {
  if (!offers_infill()) return make_error(fmt::format("{}: suite {} has no spans to fill", plugin_path_, name_));
  dicebench_infill out{};
  dicebench_error error{};
  const dicebench_status s = api_->optional_infill(handle_.get(), index, &out, &error);
  if (s != DICEBENCH_OK) return plugin_error(plugin_path_, "infill", s, error);
  return Infill{str_of(out.before), str_of(out.after), out.reference_span_bytes};
}

Result<SuiteSession::Extraction> SuiteSession::extract_span(size_t index, const std::string& span) const {
  if (!offers_infill()) return make_error(fmt::format("{}: suite {} has no spans to fill", plugin_path_, name_));
  ExtractionSinks out;
  dicebench_error error{};
  const dicebench_status s =
      api_->optional_extract_span(handle_.get(), index, {span.data(), span.size()}, &ExtractionSinks::candidate_sink,
                                  &ExtractionSinks::details_sink, &out, &error);
  return extraction_of(plugin_path_, "extract_span", s, error, std::move(out));
}

Result<std::vector<std::pair<EvaluationFlag, std::string>>> SuiteSession::review(size_t index,
                                                                                 const std::string& candidate) const {
  if (!DICEBENCH_TABLE_HOLDS(api_, dicebench_suite_api, optional_review) || api_->optional_review == nullptr)
    return std::vector<std::pair<EvaluationFlag, std::string>>{};
  return checked_review([&](dicebench_flag_sink sink, void* found, dicebench_error* error) {
    return api_->optional_review(handle_.get(), index, {candidate.data(), candidate.size()}, sink, found, error);
  });
}

Result<std::vector<std::pair<EvaluationFlag, std::string>>> SuiteSession::review_source(
    const std::string& problem_source, const std::string& candidate) const {
  if (!DICEBENCH_TABLE_HOLDS(api_, dicebench_suite_api, optional_review_source) ||
      api_->optional_review_source == nullptr)
    return std::vector<std::pair<EvaluationFlag, std::string>>{};
  return checked_review([&](dicebench_flag_sink sink, void* found, dicebench_error* error) {
    return api_->optional_review_source(handle_.get(), {problem_source.data(), problem_source.size()},
                                        {candidate.data(), candidate.size()}, sink, found, error);
  });
}

Result<std::vector<std::pair<EvaluationFlag, std::string>>> SuiteSession::checked_review(
    const std::function<dicebench_status(dicebench_flag_sink, void*, dicebench_error*)>& call) const {
  struct Findings {
    std::vector<std::pair<EvaluationFlag, std::string>> flags;
    std::string unknown;
  } found;
  const auto sink = [](void* user, dicebench_str flag, dicebench_str detail) {
    auto* f = static_cast<Findings*>(user);
    if (const auto parsed = parse_flag(str_of(flag)))
      f->flags.emplace_back(*parsed, str_of(detail));
    else if (f->unknown.empty())
      f->unknown = str_of(flag);
  };
  dicebench_error error{};
  const dicebench_status s = call(sink, &found, &error);
  if (s != DICEBENCH_OK) return plugin_error(plugin_path_, "review", s, error);
  if (!found.unknown.empty())
    return make_error(
        fmt::format("{}: review reported the flag '{}', which is not an evaluation flag", plugin_path_, found.unknown));
  if (review_flags_)
    for (const auto& [flag, detail] : found.flags)
      if (std::find(review_flags_->begin(), review_flags_->end(), flag) == review_flags_->end())
        return make_error(fmt::format("{}: review reported the flag '{}', which the suite does not declare",
                                      plugin_path_, flag_name(flag)));
  return found.flags;
}

Result<std::vector<std::string>> SuiteSession::candidate_modules() const {
  std::vector<std::string> modules;
  if (DICEBENCH_TABLE_HOLDS(api_, dicebench_suite_api, optional_candidate_modules)) {
    if (api_->optional_candidate_modules == nullptr) return modules;
    const auto sink = [](void* user, dicebench_str module) {
      static_cast<std::vector<std::string>*>(user)->push_back(str_of(module));
    };
    dicebench_error error{};
    const dicebench_status s = api_->optional_candidate_modules(handle_.get(), sink, &modules, &error);
    if (s != DICEBENCH_OK) return plugin_error(plugin_path_, "candidate_modules", s, error);
    return modules;
  }
  // A table from before ABI 1.3 may name them in its settings.
  auto settings_text = describe();
  if (!settings_text) return settings_text.error();
  const auto settings = nlohmann::json::parse(*settings_text, nullptr, false);
  if (settings.is_object())
    for (const auto& m : settings.value("candidate_python_modules", nlohmann::json::array()))
      if (m.is_string()) modules.push_back(m.get<std::string>());
  return modules;
}

std::optional<size_t> SuiteSession::index_of(const ProblemKey& key) const {
  for (size_t i = 0; i < problems_.size(); ++i)
    if (problems_[i].key() == key) return i;
  return std::nullopt;
}

}  // namespace dicebench::host
