// A suite opened through its plugin's C table, as a C++ object with Result-returning calls.
#pragma once

#include "core/base/problem_key.hpp"
#include "core/base/result.hpp"
#include "core/host/host_services.hpp"
#include "core/host/infill.hpp"
#include "core/host/plugin_library.hpp"
#include "core/spec/vocabulary.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dicebench::host {

struct SuiteProblem {
  int64_t id = 0;
  int level = 0;
  std::string name;
  std::string path;
  std::string source;
  std::string content_hash;
  ProblemKey key() const { return {level, id}; }
};

// Closes a plugin handle through its table (outside the class so it is complete where used).
struct SuiteCloser {
  const dicebench_suite_api* api = nullptr;
  void operator()(dicebench_suite* handle) const {
    if (api && handle) api->close(handle);
  }
};

class PluginRegistry;

class SuiteSession {
 public:
  static Result<SuiteSession> open(const LoadedPlugin& plugin, const std::string& name, const HostServices& services);
  // The suite `name` (kernelbench-l1, ...) of `registry`'s plugins, opened with `services`: the
  // one place a run and an evaluation session open their suite. `plugin` gets the library it is of.
  static Result<SuiteSession> open_named(const PluginRegistry& registry, const std::string& name,
                                         const HostServices& services, LoadedPlugin& plugin);

  const std::string& name() const { return name_; }
  const std::vector<SuiteProblem>& problems() const { return problems_; }
  Result<std::string> describe() const;
  Result<std::string> build_prompt(size_t index) const;
  // What extraction made of a completion for problems()[index]: the candidate program (nullopt
  // when the completion holds none) and the suite's details as a JSON object (empty when its
  // plugin sent none: a table before ABI 1.3, or a suite without optional_extract_problem).
  struct Extraction {
    std::optional<std::string> candidate;
    std::string details_json;
  };
  // `index` nullopt: for a problem not of this suite (its problem-agnostic extraction; an error for a
  // suite whose extraction needs one of its problems).
  Result<Extraction> extract(std::optional<size_t> index, const std::string& completion) const;
  // Whether the suite offers its problems as spans to fill (ABI 1.4's optional_infill and
  // optional_extract_span), for models that fill spans natively.
  bool offers_infill() const;
  // problems()[index] as a span to fill; an error where the suite offers none.
  Result<Infill> infill(size_t index) const;
  // The candidate from a span a model filled natively (its text verbatim), with the suite's details.
  Result<Extraction> extract_span(size_t index, const std::string& span) const;
  // What the suite finds by reading a candidate for problems()[index] (none when its plugin has no
  // review); a flag name outside core/spec/vocabulary.toml is the plugin's error.
  Result<std::vector<std::pair<EvaluationFlag, std::string>>> review(size_t index, const std::string& candidate) const;
  // The same for a problem not of this suite, given as its source (ABI 1.5's optional_review_source;
  // none without it).
  Result<std::vector<std::pair<EvaluationFlag, std::string>>> review_source(const std::string& problem_source,
                                                                            const std::string& candidate) const;
  // The flags its review may report (ABI 1.3's optional_review_flags); nullopt for a table without
  // the list, whose review may report any flag of core/spec/vocabulary.toml.
  const std::optional<std::vector<EvaluationFlag>>& review_flags() const { return review_flags_; }
  // The Python modules its candidates import besides torch (ABI 1.3's optional_candidate_modules;
  // for an older table, its describe()'s "candidate_python_modules").
  Result<std::vector<std::string>> candidate_modules() const;
  // The index in problems() of `key`, if the suite has that problem.
  std::optional<size_t> index_of(const ProblemKey& key) const;

 private:
  SuiteSession() = default;
  // A review call's findings, each checked against the vocabulary and the suite's declared flags.
  Result<std::vector<std::pair<EvaluationFlag, std::string>>> checked_review(
      const std::function<dicebench_status(dicebench_flag_sink, void*, dicebench_error*)>& call) const;
  const dicebench_suite_api* api_ = nullptr;
  std::unique_ptr<dicebench_suite, SuiteCloser> handle_;
  std::string name_;
  std::string plugin_path_;
  std::vector<SuiteProblem> problems_;
  std::optional<std::vector<EvaluationFlag>> review_flags_;
};

}  // namespace dicebench::host
