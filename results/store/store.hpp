// The results store: opens (and creates or migrates) a dicebench SQLite database, writes runs,
// problems, samples and evaluations each in its own transaction, and reads them back.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/base/result.hpp"
#include "results/store/rows.hpp"
#include "results/store/sqlite_handle.hpp"

namespace dicebench::results {

enum class OpenMode {
  ReadWrite,  // creates the file and its folder, migrates the schema to the newest version
  ReadOnly,   // never creates or migrates; the file must exist
};

struct OpenOptions {
  // How long a statement waits for another process's lock before failing with "locked".
  int busy_timeout_ms = 2000;
};

class Store {
 public:
  static Result<Store> open(const std::filesystem::path& path, OpenMode mode = OpenMode::ReadWrite,
                            OpenOptions options = {});

  Store(Store&&) noexcept = default;
  Store& operator=(Store&&) noexcept = default;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  const std::string& path() const { return db_.path(); }
  OpenMode mode() const { return mode_; }
  int schema_version() const { return schema_version_; }

  // ---- writes: each call is one transaction ----
  // Records a new run with status 'running'; returns its id.
  Result<std::int64_t> create_run(const NewRun& run);
  // Registers the run's problems. Rows already present (a resumed run) are kept when identical;
  // a problem whose content or prompt hash differs is refused and nothing is written.
  Result<void> add_problems(std::int64_t run, const std::vector<ProblemRow>& problems);
  // Stores one generated sample; extraction is 'ok' iff a candidate is present. Returns its id.
  Result<std::int64_t> insert_sample(const NewSample& sample);
  // Stores the evaluation of one sample (at most one per sample), with its flags and kernels.
  Result<void> insert_evaluation(const StoredEvaluation& evaluation);
  // Records a problem's degenerate traits (a JSON array of trait names) in a run.
  Result<void> set_problem_traits(std::int64_t run, const ProblemKey& problem, const std::string& traits_json);
  // Replaces the run's configuration JSON (runs.config): a resumed run records the settings it
  // changed (core/run/run_record.hpp's record_resume).
  Result<void> set_run_config(std::int64_t run, const std::string& config_json);
  // Sets the run's status; any status but 'running' also stamps the finish time. A finished run's
  // status stays finished (it moves forward only).
  Result<void> finish_run(std::int64_t run, RunStatus status);

  // ---- reads ----
  Result<RunRow> run(std::int64_t id);
  Result<std::vector<RunRow>> runs();                          // oldest first
  Result<std::vector<ProblemRow>> problems(std::int64_t run);  // by level and problem id; traits absent before schema 6
  // Samples by problem id and sample index; completion texts only when asked for.
  Result<std::vector<SampleRow>> samples(std::int64_t run, bool with_completion = false);
  // Samples that have a candidate and no evaluation yet (candidate text included).
  Result<std::vector<SampleRow>> pending_samples(std::int64_t run);
  // By sample id, each with its flags. On a read-only database of an older schema, columns it lacks
  // read as absent.
  Result<std::vector<StoredEvaluation>> evaluations(std::int64_t run);
  // The flags of the run's evaluations by sample id, each sample's in the vocabulary's order (names
  // this build does not know last); none before schema 6.
  Result<std::map<std::int64_t, std::vector<StoredFlag>>> flags(std::int64_t run);
  Result<std::vector<KernelTime>> kernels(std::int64_t sample);  // slowest first; none before schema 4
  // (problem, sample_index) of every stored sample: what a resumed run skips.
  Result<std::set<std::pair<ProblemKey, int>>> done_samples(std::int64_t run);
  Result<std::int64_t> sample_count(std::int64_t run);

  // The open connection, for read-only queries elsewhere in this module (report, summary).
  Database& database() { return db_; }

 private:
  Store(Database db, OpenMode mode, int schema_version)
      : db_(std::move(db)), mode_(mode), schema_version_(schema_version) {}
  Result<void> require_run(std::int64_t run);

  Database db_;
  OpenMode mode_ = OpenMode::ReadWrite;
  int schema_version_ = 0;
};

}  // namespace dicebench::results
