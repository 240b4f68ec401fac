// Flat JSON records of samples, written and read back: the sample's own keys here, its
// evaluation's from the spec (core/spec/evaluation.toml's [[export]], generated export_record).
#include "results/report/sample_record.hpp"

#include <fmt/format.h>

#include "results/store/json_fields.hpp"

namespace dicebench::results {

nlohmann::ordered_json sample_record(const RunResults& run, const SampleResult& s) {
  const ProblemRow* problem = find_problem(run, s.key());
  ExportSample sample;
  sample.run = run.run.id;
  sample.problem_id = s.problem_id;
  sample.level = s.level;
  sample.problem = problem ? nlohmann::ordered_json(problem->name) : nlohmann::ordered_json(nullptr);
  sample.sample_index = s.sample_index;
  sample.verdict =
      s.pending ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(std::string(verdict_name(s.status)));
  sample.has_candidate = s.has_candidate;
  sample.problem_traits = or_null(s.problem_traits);
  sample.infill_exact_match = or_null(s.infill_exact_match);
  sample.infill_edit_distance = or_null(s.infill_edit_distance);
  // A sample without an evaluation has only its default figures: absent (null), not false or zero,
  // where the spec says so; compiled and correct are false.
  return export_record(sample, &s);
}

Result<SampleResult> parse_sample_record(const nlohmann::json& r, const std::string& where) {
  SampleResult s;
  auto sample = read_export_record(r, s, where);
  if (!sample) return sample.error();
  try {
    s.problem_id = sample->problem_id.get<std::int64_t>();
    s.level = sample->level.get<int>();
    s.sample_index = sample->sample_index.get<int>();
    s.has_candidate = sample->has_candidate.get<bool>();
    s.pending = sample->verdict.is_null();
    if (!s.pending) {
      const auto verdict = parse_verdict(sample->verdict.get<std::string>());
      if (!verdict)
        return make_error(fmt::format("{}: unknown verdict '{}'", where, sample->verdict.get<std::string>()));
      s.status = *verdict;
    }
    sort_flags(s.flags);
    if (!sample->problem_traits.is_null()) s.problem_traits = sample->problem_traits.get<std::vector<std::string>>();
    // Written since kernel infilling; absent from older records.
    if (!sample->infill_exact_match.is_null()) s.infill_exact_match = sample->infill_exact_match.get<bool>();
    if (!sample->infill_edit_distance.is_null())
      s.infill_edit_distance = sample->infill_edit_distance.get<std::int64_t>();
    return s;
  } catch (const nlohmann::json::exception& e) {
    return make_error(fmt::format("{}: malformed sample record ({})", where, e.what()));
  }
}

}  // namespace dicebench::results
