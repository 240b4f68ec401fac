// A model opened through its plugin's C table, as a C++ object with Result-returning calls.
#pragma once

#include "core/base/result.hpp"
#include "core/host/host_services.hpp"
#include "core/host/infill.hpp"
#include "core/host/plugin_library.hpp"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dicebench::host {

struct GenerationRequest {
  std::string prompt;
  std::string suite;
  int level = 0;
  int64_t problem_id = 0;
  std::string problem_name;
  int sample_index = 0;
  uint64_t seed = 0;
  std::optional<Infill> infill;  // the span to fill, in a run that fills spans natively (every request then)
};

struct Generation {
  std::string completion;
  std::string stats_json;
  std::optional<std::string> candidate;  // set when the model returns the program itself
};

// Closes a plugin handle through its table (outside the class so it is complete where used).
struct ModelCloser {
  const dicebench_model_api* api = nullptr;
  void operator()(dicebench_model* handle) const {
    if (api && handle) api->close(handle);
  }
};

class ModelSession {
 public:
  static Result<ModelSession> open(const LoadedPlugin& plugin, const std::string& name, const std::string& argument,
                                   const HostServices& services);

  Result<std::string> describe() const;
  size_t preferred_batch() const;
  // For models serving stored completions: problem id -> number of samples for `level`.
  bool serves_stored_samples() const;
  Result<std::map<int64_t, int>> stored_samples(int level) const;
  Result<void> prepare(const std::vector<GenerationRequest>& requests);
  // For requests that each carry a span to fill: prepares them as prepare() does and says true, or
  // says false where the model cannot fill spans natively (its plugin has no ABI 1.4
  // optional_prepare_infill, or it answers that the opened model cannot).
  Result<bool> prepare_infill(const std::vector<GenerationRequest>& requests);
  // Calls on_result(index into requests, generation) as each request finishes; the first
  // failure it returns ends the call with that error. Requests carrying spans are filled natively
  // (the completion is then the span's text).
  Result<void> generate(const std::vector<GenerationRequest>& requests,
                        const std::function<Result<void>(size_t, Generation&&)>& on_result);

 private:
  ModelSession() = default;
  bool fills_spans() const;  // the table has ABI 1.4's infill calls
  const dicebench_model_api* api_ = nullptr;
  std::unique_ptr<dicebench_model, ModelCloser> handle_;
  std::string plugin_path_;
};

}  // namespace dicebench::host
