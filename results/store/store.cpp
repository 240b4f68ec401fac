// Writes and reads of runs, problems, samples and evaluations. Every write is its own
// BEGIN IMMEDIATE transaction, so a killed process loses at most the item in flight.
#include "results/store/store.hpp"
#include "results/store/schema.hpp"

#include <sqlite3.h>

#include <fmt/format.h>

#include <algorithm>

namespace dicebench::results {
namespace {

constexpr std::string_view kNow = "strftime('%Y-%m-%dT%H:%M:%SZ','now')";

constexpr std::string_view kRunColumns =
    "id, created, finished, status, model, suite, config, dicebench_version, git_sha, host, gpu, "
    "driver_version, cuda_version, torch_version, seed, repro";

RunRow read_run(const Statement& stmt) {
  RunRow row;
  row.id = stmt.column_int64(0);
  row.created = stmt.column_text(1);
  row.finished = stmt.column_optional_text(2);
  row.status = parse_run_status(stmt.column_text(3)).value_or(RunStatus::failed);
  row.model = stmt.column_text(4);
  row.suite = stmt.column_text(5);
  row.config_json = stmt.column_text(6);
  row.dicebench_version = stmt.column_text(7);
  row.git_sha = stmt.column_text(8);
  row.host = stmt.column_text(9);
  row.gpu = stmt.column_optional_text(10);
  row.driver_version = stmt.column_optional_text(11);
  row.cuda_version = stmt.column_optional_text(12);
  row.torch_version = stmt.column_optional_text(13);
  row.seed = stmt.column_int64(14);
  row.repro_json = stmt.column_text(15);
  return row;
}

ProblemRow read_problem(const Statement& stmt) {
  ProblemRow row;
  row.problem_id = stmt.column_int64(0);
  row.level = static_cast<int>(stmt.column_int64(1));
  row.name = stmt.column_text(2);
  row.path = stmt.column_text(3);
  row.content_hash = stmt.column_text(4);
  row.prompt_hash = stmt.column_text(5);
  row.traits_json = stmt.column_optional_text(6);
  return row;
}

// Columns: id, run, problem_id, sample_index, prompt_hash, candidate, extraction, gen_stats,
// created, completion (or NULL), level.
SampleRow read_sample(const Statement& stmt, bool with_completion) {
  SampleRow row;
  row.id = stmt.column_int64(0);
  row.run = stmt.column_int64(1);
  row.problem_id = stmt.column_int64(2);
  row.sample_index = static_cast<int>(stmt.column_int64(3));
  row.prompt_hash = stmt.column_text(4);
  row.candidate = stmt.column_optional_text(5);
  row.extraction = stmt.column_text(6);
  row.gen_stats_json = stmt.column_text(7);
  row.created = stmt.column_text(8);
  if (with_completion) row.completion = stmt.column_text(9);
  row.level = static_cast<int>(stmt.column_int64(10));
  return row;
}

bool is_constraint(int rc, int extended) { return rc == extended; }

}  // namespace

Result<void> Store::require_run(std::int64_t run) {
  auto stmt = db_.prepare("SELECT 1 FROM runs WHERE id = ?", "cannot read runs");
  if (!stmt.ok()) return stmt.error();
  stmt->bind(1, run);
  auto row = stmt->step("cannot read runs");
  if (!row.ok()) return row.error();
  if (!*row) return make_error(fmt::format("no run {} in {}", run, path()));
  return {};
}

// ---- writes ----

Result<std::int64_t> Store::create_run(const NewRun& run) {
  constexpr std::string_view context = "cannot create run";
  auto transaction = Transaction::begin(db_, context);
  if (!transaction.ok()) return transaction.error();
  auto stmt = db_.prepare(
      fmt::format("INSERT INTO runs (created, status, model, suite, config, dicebench_version, git_sha, host, gpu, "
                  "driver_version, cuda_version, torch_version, seed, repro) "
                  "VALUES ({}, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                  kNow),
      context);
  if (!stmt.ok()) return stmt.error();
  stmt->bind_all(run.model, run.suite, run.config_json, run.dicebench_version, run.git_sha, run.host, run.gpu,
                 run.driver_version, run.cuda_version, run.torch_version, run.seed, run.repro_json);
  DICEBENCH_TRY(stmt->run(context));
  const std::int64_t id = sqlite3_last_insert_rowid(db_.get());
  DICEBENCH_TRY(transaction->commit());
  return id;
}

Result<void> Store::add_problems(std::int64_t run, const std::vector<ProblemRow>& problems) {
  const std::string context = fmt::format("cannot add problems to run {}", run);
  auto transaction = Transaction::begin(db_, context);
  if (!transaction.ok()) return transaction.error();
  DICEBENCH_TRY(require_run(run));
  auto insert = db_.prepare(
      "INSERT INTO problems (run, problem_id, level, name, path, content_hash, prompt_hash) "
      "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run, level, problem_id) DO NOTHING",
      context);
  if (!insert.ok()) return insert.error();
  auto existing = db_.prepare(
      "SELECT content_hash, prompt_hash FROM problems WHERE run = ? AND level = ? AND problem_id = ?", context);
  if (!existing.ok()) return existing.error();
  for (const ProblemRow& problem : problems) {
    insert->reset();
    insert->bind_all(run, problem.problem_id, problem.level, problem.name, problem.path, problem.content_hash,
                     problem.prompt_hash);
    DICEBENCH_TRY(insert->run(context));
    if (sqlite3_changes(db_.get()) != 0) continue;
    // Already registered (a resumed run): it must be the same problem.
    existing->reset();
    existing->bind_all(run, problem.level, problem.problem_id);
    auto row = existing->step(context);
    if (!row.ok()) return row.error();
    if (!*row)
      return make_error(fmt::format("{}: {}: problem {} vanished", path(), context, problem_key_text(problem.key())));
    const char* differs = nullptr;
    if (existing->column_text(0) != problem.content_hash) {
      differs = "content hash differs";
    } else if (existing->column_text(1) != problem.prompt_hash) {
      differs = "prompt hash differs";
    }
    if (differs != nullptr) {
      return make_error(
          fmt::format("problem {} changed since run {} started ({})", problem_key_text(problem.key()), run, differs));
    }
  }
  return transaction->commit();
}

Result<std::int64_t> Store::insert_sample(const NewSample& sample) {
  const std::string context = fmt::format("cannot store sample {} of problem {} in run {}", sample.sample_index,
                                          problem_key_text({sample.level, sample.problem_id}), sample.run);
  auto transaction = Transaction::begin(db_, context);
  if (!transaction.ok()) return transaction.error();
  auto stmt = db_.prepare(
      fmt::format("INSERT INTO samples (run, level, problem_id, sample_index, prompt_hash, completion, candidate, "
                  "extraction, gen_stats, extraction_details, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, {})",
                  kNow),
      context);
  if (!stmt.ok()) return stmt.error();
  stmt->bind_all(sample.run, sample.level, sample.problem_id, sample.sample_index, sample.prompt_hash,
                 sample.completion, sample.candidate, sample.candidate ? "ok" : "no_code_block", sample.gen_stats_json,
                 sample.extraction_details_json);
  const int rc = sqlite3_step(stmt->get());
  if (rc != SQLITE_DONE) {
    if (is_constraint(rc, SQLITE_CONSTRAINT_UNIQUE)) {
      return make_error(fmt::format("{}: run {} already has sample {} of problem {}", path(), sample.run,
                                    sample.sample_index, problem_key_text({sample.level, sample.problem_id})));
    }
    if (is_constraint(rc, SQLITE_CONSTRAINT_FOREIGNKEY)) {
      return make_error(fmt::format("{}: {}: problem {} is not registered in run {}", path(), context,
                                    problem_key_text({sample.level, sample.problem_id}), sample.run));
    }
    return db_.error(rc, context);
  }
  const std::int64_t id = sqlite3_last_insert_rowid(db_.get());
  DICEBENCH_TRY(transaction->commit());
  return id;
}

Result<void> Store::insert_evaluation(const StoredEvaluation& e) {
  const std::string context = fmt::format("cannot store evaluation of sample {}", e.sample);
  if (e.correct != (e.status == Verdict::correct)) {
    return make_error(fmt::format("{}: {}: verdict {} contradicts correct={}", path(), context, verdict_name(e.status),
                                  e.correct ? 1 : 0));
  }
  if (e.correct && !e.compiled) {
    return make_error(fmt::format("{}: {}: a correct sample must have compiled", path(), context));
  }
  auto transaction = Transaction::begin(db_, context);
  if (!transaction.ok()) return transaction.error();
  auto stmt = db_.prepare(insert_evaluation_sql(kNow), context);
  if (!stmt.ok()) return stmt.error();
  bind_evaluation(*stmt, e);
  const int rc = sqlite3_step(stmt->get());
  if (rc != SQLITE_DONE) {
    if (is_constraint(rc, SQLITE_CONSTRAINT_PRIMARYKEY) || is_constraint(rc, SQLITE_CONSTRAINT_UNIQUE)) {
      return make_error(fmt::format("{}: sample {} already has an evaluation", path(), e.sample));
    }
    if (is_constraint(rc, SQLITE_CONSTRAINT_FOREIGNKEY)) {
      return make_error(fmt::format("{}: {}: no sample {}", path(), context, e.sample));
    }
    return db_.error(rc, context);
  }
  if (!e.kernels.empty()) {
    auto kernel = db_.prepare(insert_kernel_sql(), context);
    if (!kernel.ok()) return kernel.error();
    for (const KernelTime& k : e.kernels) {
      kernel->reset();
      bind_kernel(*kernel, e.sample, k);
      DICEBENCH_TRY(kernel->run(context));
    }
  }
  if (!e.flags.empty()) {
    auto flag = db_.prepare("INSERT OR REPLACE INTO evaluation_flags (sample, flag, detail) VALUES (?, ?, ?)", context);
    if (!flag.ok()) return flag.error();
    for (const StoredFlag& f : e.flags) {
      flag->reset();
      flag->bind_all(e.sample, f.name, f.detail);
      DICEBENCH_TRY(flag->run(context));
    }
  }
  return transaction->commit();
}

Result<void> Store::set_problem_traits(std::int64_t run, const ProblemKey& problem, const std::string& traits_json) {
  const std::string context =
      fmt::format("cannot store the traits of problem {} in run {}", problem_key_text(problem), run);
  auto transaction = Transaction::begin(db_, context);
  if (!transaction.ok()) return transaction.error();
  auto stmt = db_.prepare("UPDATE problems SET traits = ? WHERE run = ? AND level = ? AND problem_id = ?", context);
  if (!stmt.ok()) return stmt.error();
  stmt->bind_all(traits_json, run, problem.level, problem.problem_id);
  DICEBENCH_TRY(stmt->run(context));
  if (sqlite3_changes(db_.get()) == 0) return make_error(fmt::format("{}: {}: no such problem", path(), context));
  return transaction->commit();
}

Result<void> Store::set_run_config(std::int64_t run, const std::string& config_json) {
  const std::string context = fmt::format("cannot update the configuration of run {}", run);
  auto transaction = Transaction::begin(db_, context);
  if (!transaction.ok()) return transaction.error();
  auto stmt = db_.prepare("UPDATE runs SET config = ? WHERE id = ?", context);
  if (!stmt.ok()) return stmt.error();
  stmt->bind_all(config_json, run);
  DICEBENCH_TRY(stmt->run(context));
  if (sqlite3_changes(db_.get()) == 0) return make_error(fmt::format("no run {} in {}", run, path()));
  return transaction->commit();
}

Result<void> Store::finish_run(std::int64_t run, RunStatus status) {
  const std::string context = fmt::format("cannot update run {}", run);
  auto transaction = Transaction::begin(db_, context);
  if (!transaction.ok()) return transaction.error();
  {  // Forward only: a finished run stays finished.
    auto current = db_.prepare("SELECT status FROM runs WHERE id = ?", context);
    if (!current.ok()) return current.error();
    current->bind(1, run);
    auto row = current->step(context);
    if (!row.ok()) return row.error();
    if (!*row) return make_error(fmt::format("no run {} in {}", run, path()));
    if (current->column_text(0) == run_status_name(RunStatus::finished) && status != RunStatus::finished)
      return make_error(
          fmt::format("{}: {}: it is finished, and a finished run's status does not change", path(), context));
  }
  auto stmt =
      db_.prepare(fmt::format("UPDATE runs SET status = ?1, finished = CASE WHEN ?1 = 'running' THEN NULL ELSE {} END "
                              "WHERE id = ?2",
                              kNow),
                  context);
  if (!stmt.ok()) return stmt.error();
  stmt->bind_all(run_status_name(status), run);
  DICEBENCH_TRY(stmt->run(context));
  if (sqlite3_changes(db_.get()) == 0) return make_error(fmt::format("no run {} in {}", run, path()));
  return transaction->commit();
}

// ---- reads ----

Result<RunRow> Store::run(std::int64_t id) {
  constexpr std::string_view context = "cannot read runs";
  auto stmt = db_.prepare(fmt::format("SELECT {} FROM runs WHERE id = ?", kRunColumns), context);
  if (!stmt.ok()) return stmt.error();
  stmt->bind(1, id);
  auto row = stmt->step(context);
  if (!row.ok()) return row.error();
  if (!*row) return make_error(fmt::format("no run {} in {}", id, path()));
  return read_run(*stmt);
}

Result<std::vector<RunRow>> Store::runs() {
  constexpr std::string_view context = "cannot read runs";
  auto stmt = db_.prepare(fmt::format("SELECT {} FROM runs ORDER BY id", kRunColumns), context);
  if (!stmt.ok()) return stmt.error();
  std::vector<RunRow> rows;
  for (;;) {
    auto row = stmt->step(context);
    if (!row.ok()) return row.error();
    if (!*row) break;
    rows.push_back(read_run(*stmt));
  }
  return rows;
}

Result<std::vector<ProblemRow>> Store::problems(std::int64_t run) {
  constexpr std::string_view context = "cannot read problems";
  DICEBENCH_TRY(require_run(run));
  // problems.traits came with schema version 6; a read-only older database reads it as absent.
  auto stmt =
      db_.prepare(fmt::format("SELECT problem_id, level, name, path, content_hash, prompt_hash, {} FROM problems "
                              "WHERE run = ? ORDER BY level, problem_id",
                              schema_version_ >= 6 ? "traits" : "NULL"),
                  context);
  if (!stmt.ok()) return stmt.error();
  stmt->bind(1, run);
  std::vector<ProblemRow> rows;
  for (;;) {
    auto row = stmt->step(context);
    if (!row.ok()) return row.error();
    if (!*row) break;
    rows.push_back(read_problem(*stmt));
  }
  return rows;
}

namespace {

Result<std::vector<SampleRow>> select_samples(Database& db, int schema_version, std::int64_t run, bool with_completion,
                                              std::string_view condition) {
  constexpr std::string_view context = "cannot read samples";
  auto stmt =
      db.prepare(fmt::format("SELECT * FROM (SELECT s.id, s.run, s.problem_id, s.sample_index, s.prompt_hash, "
                             "s.candidate, s.extraction, s.gen_stats, s.created, {}, {} AS level "
                             "FROM samples AS s WHERE s.run = ? {}) ORDER BY level, problem_id, sample_index",
                             with_completion ? "s.completion" : "NULL", sample_level_sql(schema_version), condition),
                 context);
  if (!stmt.ok()) return stmt.error();
  stmt->bind(1, run);
  std::vector<SampleRow> rows;
  for (;;) {
    auto row = stmt->step(context);
    if (!row.ok()) return row.error();
    if (!*row) break;
    rows.push_back(read_sample(*stmt, with_completion));
  }
  return rows;
}

}  // namespace

Result<std::vector<SampleRow>> Store::samples(std::int64_t run, bool with_completion) {
  DICEBENCH_TRY(require_run(run));
  return select_samples(db_, schema_version_, run, with_completion, "");
}

Result<std::vector<SampleRow>> Store::pending_samples(std::int64_t run) {
  DICEBENCH_TRY(require_run(run));
  return select_samples(
      db_, schema_version_, run, false,
      "AND s.candidate IS NOT NULL AND NOT EXISTS (SELECT 1 FROM evaluations AS e WHERE e.sample = s.id)");
}

Result<std::vector<StoredEvaluation>> Store::evaluations(std::int64_t run) {
  constexpr std::string_view context = "cannot read evaluations";
  DICEBENCH_TRY(require_run(run));
  // Columns added by later schema versions read as absent from a read-only older database.
  auto stmt = db_.prepare(fmt::format("SELECT {} FROM evaluations AS e JOIN samples AS s ON s.id = e.sample "
                                      "WHERE s.run = ? ORDER BY e.sample",
                                      evaluation_select_sql(schema_version_, "e")),
                          context);
  if (!stmt.ok()) return stmt.error();
  stmt->bind(1, run);
  auto flags = this->flags(run);
  if (!flags.ok()) return flags.error();
  std::vector<StoredEvaluation> rows;
  for (;;) {
    auto row = stmt->step(context);
    if (!row.ok()) return row.error();
    if (!*row) break;
    StoredEvaluation e;
    if (auto read = read_evaluation(*stmt, 0, e); !read)
      return make_error(fmt::format("{}: {}", path(), read.error().message));
    if (const auto it = flags->find(e.sample); it != flags->end()) e.flags = std::move(it->second);
    rows.push_back(std::move(e));
  }
  return rows;
}

Result<std::map<std::int64_t, std::vector<StoredFlag>>> Store::flags(std::int64_t run) {
  std::map<std::int64_t, std::vector<StoredFlag>> out;
  if (schema_version_ < 6) return out;  // no evaluation_flags table before version 6
  constexpr std::string_view context = "cannot read evaluation flags";
  auto stmt = db_.prepare(
      "SELECT f.sample, f.flag, f.detail FROM evaluation_flags AS f JOIN samples AS s ON s.id = f.sample "
      "WHERE s.run = ?",
      context);
  if (!stmt.ok()) return stmt.error();
  stmt->bind(1, run);
  for (;;) {
    auto row = stmt->step(context);
    if (!row.ok()) return row.error();
    if (!*row) break;
    out[stmt->column_int64(0)].push_back({stmt->column_text(1), stmt->column_text(2)});
  }
  for (auto& [sample, flags] : out) sort_flags(flags);
  return out;
}

Result<std::vector<KernelTime>> Store::kernels(std::int64_t sample) {
  constexpr std::string_view context = "cannot read evaluation_kernels";
  if (schema_version_ < 4) return std::vector<KernelTime>{};  // no per-kernel rows before version 4
  auto stmt =
      db_.prepare(fmt::format("SELECT {} FROM evaluation_kernels WHERE sample = ? ORDER BY ms_per_call DESC, name",
                              kernel_select_sql()),
                  context);
  if (!stmt.ok()) return stmt.error();
  stmt->bind(1, sample);
  std::vector<KernelTime> rows;
  for (;;) {
    auto row = stmt->step(context);
    if (!row.ok()) return row.error();
    if (!*row) break;
    rows.push_back(read_kernel(*stmt, 0));
  }
  return rows;
}

Result<std::set<std::pair<ProblemKey, int>>> Store::done_samples(std::int64_t run) {
  constexpr std::string_view context = "cannot read samples";
  DICEBENCH_TRY(require_run(run));
  auto stmt = db_.prepare(fmt::format("SELECT {}, s.problem_id, s.sample_index FROM samples AS s WHERE s.run = ?",
                                      sample_level_sql(schema_version_)),
                          context);
  if (!stmt.ok()) return stmt.error();
  stmt->bind(1, run);
  std::set<std::pair<ProblemKey, int>> done;
  for (;;) {
    auto row = stmt->step(context);
    if (!row.ok()) return row.error();
    if (!*row) break;
    done.emplace(ProblemKey{static_cast<int>(stmt->column_int64(0)), stmt->column_int64(1)},
                 static_cast<int>(stmt->column_int64(2)));
  }
  return done;
}

Result<std::int64_t> Store::sample_count(std::int64_t run) {
  DICEBENCH_TRY(require_run(run));
  auto stmt = db_.prepare("SELECT count(*) FROM samples WHERE run = ?", "cannot count samples");
  if (!stmt.ok()) return stmt.error();
  stmt->bind(1, run);
  auto row = stmt->step("cannot count samples");
  if (!row.ok()) return row.error();
  return stmt->column_int64(0);
}

}  // namespace dicebench::results
