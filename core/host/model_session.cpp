// A model opened through its plugin's C table.
#include "core/host/model_session.hpp"

#include "core/host/plugin_call.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace dicebench::host {
namespace {

dicebench_str str(const std::string& s) { return {s.data(), s.size()}; }

std::vector<dicebench_generation_request> to_c(const std::vector<GenerationRequest>& requests) {
  std::vector<dicebench_generation_request> out;
  out.reserve(requests.size());
  for (const auto& r : requests)
    out.push_back({str(r.prompt), str(r.suite), r.level, r.problem_id, str(r.problem_name), r.sample_index, r.seed});
  return out;
}

std::vector<dicebench_infill> infill_of(const std::vector<GenerationRequest>& requests) {
  std::vector<dicebench_infill> out;
  out.reserve(requests.size());
  for (const auto& r : requests)
    out.push_back({str(r.infill->before), str(r.infill->after), r.infill->reference_span_bytes});
  return out;
}

bool all_fill_spans(const std::vector<GenerationRequest>& requests) {
  return std::all_of(requests.begin(), requests.end(), [](const GenerationRequest& r) { return r.infill.has_value(); });
}

struct SinkState {
  const std::function<Result<void>(size_t, Generation&&)>* on_result;
  size_t count;
  std::string error;
};

void result_sink(void* user, size_t index, const dicebench_generation_result* result) {
  auto* state = static_cast<SinkState*>(user);
  if (!state->error.empty()) return;  // the first failure ends the call; later results are dropped
  if (index >= state->count) {
    state->error = fmt::format("model plugin returned a result for request {} of {}", index, state->count);
    return;
  }
  Generation generation;
  generation.completion = str_of(result->completion);
  generation.stats_json = result->stats_json.data ? str_of(result->stats_json) : "{}";
  if (result->optional_candidate.data) generation.candidate = str_of(result->optional_candidate);
  if (auto stored = (*state->on_result)(index, std::move(generation)); !stored) state->error = stored.error().message;
}

}  // namespace

Result<ModelSession> ModelSession::open(const LoadedPlugin& plugin, const std::string& name,
                                        const std::string& argument, const HostServices& services) {
  if (plugin.info.kind != DICEBENCH_KIND_MODEL)
    return make_error(fmt::format("{} is not a model plugin", plugin.info.path));
  ModelSession session;
  session.api_ = static_cast<const dicebench_model_api*>(plugin.api);
  session.plugin_path_ = plugin.info.path;
  dicebench_error error{};
  dicebench_model* handle = nullptr;
  const dicebench_status status = session.api_->open(services.table(), str(name), str(argument), &handle, &error);
  if (status != DICEBENCH_OK) return plugin_error(plugin.info.path, "open", status, error);
  session.handle_ = std::unique_ptr<dicebench_model, ModelCloser>(handle, ModelCloser{session.api_});
  return session;
}

Result<std::string> ModelSession::describe() const {
  std::string out;
  dicebench_error error{};
  const dicebench_status s = api_->describe(handle_.get(), &append_to_string, &out, &error);
  if (s != DICEBENCH_OK) return plugin_error(plugin_path_, "describe", s, error);
  return out;
}

size_t ModelSession::preferred_batch() const {
  const size_t batch = api_->preferred_batch(handle_.get());
  return batch == 0 ? 1 : batch;
}

bool ModelSession::serves_stored_samples() const {
  return DICEBENCH_TABLE_HOLDS(api_, dicebench_model_api, optional_stored_samples) && api_->optional_stored_samples;
}

Result<std::map<int64_t, int>> ModelSession::stored_samples(int level) const {
  std::string out;
  dicebench_error error{};
  const dicebench_status s = api_->optional_stored_samples(handle_.get(), level, &append_to_string, &out, &error);
  if (s != DICEBENCH_OK) return plugin_error(plugin_path_, "stored_samples", s, error);
  std::map<int64_t, int> counts;
  try {
    const auto json = nlohmann::json::parse(out);
    for (const auto& [key, value] : json.items()) counts[std::stoll(key)] = value.get<int>();
  } catch (const std::exception& e) {
    return make_error(fmt::format("{}: stored_samples returned malformed JSON ({})", plugin_path_, e.what()));
  }
  return counts;
}

Result<void> ModelSession::prepare(const std::vector<GenerationRequest>& requests) {
  const auto c_requests = to_c(requests);
  dicebench_error error{};
  const dicebench_status s = api_->prepare(handle_.get(), c_requests.data(), c_requests.size(), &error);
  if (s != DICEBENCH_OK) return plugin_error(plugin_path_, "prepare", s, error);
  return {};
}

bool ModelSession::fills_spans() const {
  return DICEBENCH_TABLE_HOLDS(api_, dicebench_model_api, optional_generate_infill) &&
         api_->optional_prepare_infill != nullptr && api_->optional_generate_infill != nullptr;
}

Result<bool> ModelSession::prepare_infill(const std::vector<GenerationRequest>& requests) {
  if (!all_fill_spans(requests)) return make_error("prepare_infill: a request carries no span to fill");
  if (!fills_spans()) return false;
  const auto c_requests = to_c(requests);
  const auto c_infill = infill_of(requests);
  dicebench_error error{};
  const dicebench_status s =
      api_->optional_prepare_infill(handle_.get(), c_requests.data(), c_infill.data(), c_requests.size(), &error);
  if (s == DICEBENCH_NOT_FOUND) return false;
  if (s != DICEBENCH_OK) return plugin_error(plugin_path_, "prepare_infill", s, error);
  return true;
}

Result<void> ModelSession::generate(const std::vector<GenerationRequest>& requests,
                                    const std::function<Result<void>(size_t, Generation&&)>& on_result) {
  const auto c_requests = to_c(requests);
  SinkState state{&on_result, requests.size(), {}};
  dicebench_error error{};
  const bool spans = !requests.empty() && requests.front().infill.has_value();
  if (spans && (!all_fill_spans(requests) || !fills_spans()))
    return make_error("generate: spans to fill for a model that cannot");
  const auto c_infill = spans ? infill_of(requests) : std::vector<dicebench_infill>();
  const dicebench_status s =
      spans ? api_->optional_generate_infill(handle_.get(), c_requests.data(), c_infill.data(), c_requests.size(),
                                             &result_sink, &state, &error)
            : api_->generate(handle_.get(), c_requests.data(), c_requests.size(), &result_sink, &state, &error);
  if (!state.error.empty()) return make_error(state.error);
  if (s != DICEBENCH_OK) return plugin_error(plugin_path_, "generate", s, error);
  return {};
}

}  // namespace dicebench::host
