// Writes and reads of runs, problems, samples and evaluations. Every write is its own
// BEGIN IMMEDIATE transaction, so a killed process loses at most the item in flight.
#include "results/store.hpp"
#include "results/schema.hpp"

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
  auto existing = db_.prepare("SELECT content_hash, prompt_hash FROM problems WHERE run = ? AND level = ? AND problem_id = ?",
                              context);
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
    if (!*row) return make_error(fmt::format("{}: {}: problem {} vanished", path(), context, problem_key_text(problem.key())));
    const char* differs = nullptr;
    if (existing->column_text(0) != problem.content_hash) {
      differs = "content hash differs";
    } else if (existing->column_text(1) != problem.prompt_hash) {
      differs = "prompt hash differs";
    }
    if (differs != nullptr) {
      return make_error(fmt::format("problem {} changed since run {} started ({})", problem_key_text(problem.key()), run,
                                    differs));
    }
  }
  return transaction->commit();
}

Result<std::int64_t> Store::insert_sample(const NewSample& sample) {
  const std::string context =
      fmt::format("cannot store sample {} of problem {} in run {}", sample.sample_index,
                  problem_key_text({sample.level, sample.problem_id}), sample.run);
  auto transaction = Transaction::begin(db_, context);
  if (!transaction.ok()) return transaction.error();
  auto stmt = db_.prepare(
      fmt::format("INSERT INTO samples (run, level, problem_id, sample_index, prompt_hash, completion, candidate, "
                  "extraction, gen_stats, extraction_details, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, {})",
                  kNow),
      context);
  if (!stmt.ok()) return stmt.error();
  stmt->bind_all(sample.run, sample.level, sample.problem_id, sample.sample_index, sample.prompt_hash, sample.completion,
                 sample.candidate, sample.candidate ? "ok" : "no_code_block", sample.gen_stats_json, sample.extraction_details_json);
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

Result<void> Store::insert_evaluation(const NewEvaluation& e) {
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
  auto stmt = db_.prepare(
      fmt::format("INSERT INTO evaluations (sample, status, compiled, correct, device, runtime_ms, runtime_mean_ms, "
                  "runtime_std_ms, runtime_min_ms, runtime_max_ms, runtime_p10_ms, runtime_p90_ms, baseline_ms, "
                  "baseline_mean_ms, speedup, speedup_mean, error_class, error_message, details, compile_path, compile_reason, "
                  "compile_seconds, compile_log, device_busy_ms, host_wall_ms, custom_kernel_share, call_host_ms, "
                  "launch_latency_ms, start_span_ms, margin, memory_floor_ms, created) "
                  "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, {})",
                  kNow),
      context);
  if (!stmt.ok()) return stmt.error();
  stmt->bind_all(e.sample, verdict_name(e.status), e.compiled ? 1 : 0, e.correct ? 1 : 0, e.device, e.runtime_ms,
                 e.runtime_mean_ms, e.runtime_std_ms, e.runtime_min_ms, e.runtime_max_ms, e.runtime_p10_ms,
                 e.runtime_p90_ms, e.baseline_ms, e.baseline_mean_ms, e.speedup, e.speedup_mean, e.error_class,
                 e.error_message, e.details_json, e.compile_path, e.compile_reason, e.compile_seconds, e.compile_log,
                 e.device_busy_ms, e.host_wall_ms, e.custom_kernel_share, e.call_host_ms, e.launch_latency_ms,
                 e.start_span_ms, e.margin, e.memory_floor_ms);
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
    auto kernel = db_.prepare(
        "INSERT INTO evaluation_kernels (sample, name, kind, from_candidate, launches_per_call, ms_per_call, grid, block) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        context);
    if (!kernel.ok()) return kernel.error();
    for (const KernelRow& k : e.kernels) {
      kernel->reset();
      kernel->bind_all(e.sample, k.name, k.kind, k.from_candidate ? 1 : 0, k.launches_per_call, k.ms_per_call, k.grid,
                       k.block);
      DICEBENCH_TRY(kernel->run(context));
    }
  }
  if (!e.flags.empty()) {
    auto flag = db_.prepare("INSERT OR REPLACE INTO evaluation_flags (sample, flag, detail) VALUES (?, ?, ?)", context);
    if (!flag.ok()) return flag.error();
    for (const FlagRow& f : e.flags) {
      flag->reset();
      flag->bind_all(e.sample, flag_name(f.flag), f.detail);
      DICEBENCH_TRY(flag->run(context));
    }
  }
  return transaction->commit();
}

Result<void> Store::set_problem_traits(std::int64_t run, const ProblemKey& problem, const std::string& traits_json) {
  const std::string context = fmt::format("cannot store the traits of problem {} in run {}", problem_key_text(problem), run);
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
      return make_error(fmt::format("{}: {}: it is finished, and a finished run's status does not change", path(), context));
  }
  auto stmt = db_.prepare(
      fmt::format("UPDATE runs SET status = ?1, finished = CASE WHEN ?1 = 'running' THEN NULL ELSE {} END "
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
  auto stmt = db_.prepare(fmt::format("SELECT problem_id, level, name, path, content_hash, prompt_hash, {} FROM problems "
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
  auto stmt = db.prepare(fmt::format("SELECT * FROM (SELECT s.id, s.run, s.problem_id, s.sample_index, s.prompt_hash, "
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
  return select_samples(db_, schema_version_, run, false,
                        "AND s.candidate IS NOT NULL AND NOT EXISTS (SELECT 1 FROM evaluations AS e WHERE e.sample = s.id)");
}

Result<std::vector<EvaluationRow>> Store::evaluations(std::int64_t run) {
  constexpr std::string_view context = "cannot read evaluations";
  DICEBENCH_TRY(require_run(run));
  // Columns added by later schema versions read as absent from a read-only older database.
  const bool v4 = schema_version_ >= 4, v5 = schema_version_ >= 5, v6 = schema_version_ >= 6;
  auto stmt = db_.prepare(
      fmt::format("SELECT e.sample, e.status, e.compiled, e.correct, e.device, e.runtime_ms, e.runtime_mean_ms, "
                  "e.runtime_std_ms, e.runtime_min_ms, e.runtime_max_ms, e.runtime_p10_ms, e.runtime_p90_ms, "
                  "e.baseline_ms, e.baseline_mean_ms, e.speedup, e.speedup_mean, e.error_class, e.error_message, "
                  "e.details, e.created, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {} "
                  "FROM evaluations AS e JOIN samples AS s ON s.id = e.sample WHERE s.run = ? ORDER BY e.sample",
                  v4 ? "e.compile_path" : "NULL", v4 ? "e.compile_reason" : "NULL", v4 ? "e.compile_seconds" : "NULL",
                  v4 ? "e.compile_log" : "NULL", v4 ? "e.device_busy_ms" : "NULL", v4 ? "e.host_wall_ms" : "NULL",
                  v4 ? "e.custom_kernel_share" : "NULL", v5 ? "e.call_host_ms" : "NULL",
                  v5 ? "e.launch_latency_ms" : "NULL", v5 ? "e.start_span_ms" : "NULL", v6 ? "e.margin" : "NULL",
                  v6 ? "e.memory_floor_ms" : "NULL"),
      context);
  if (!stmt.ok()) return stmt.error();
  stmt->bind(1, run);
  std::vector<EvaluationRow> rows;
  for (;;) {
    auto row = stmt->step(context);
    if (!row.ok()) return row.error();
    if (!*row) break;
    EvaluationRow e;
    e.sample = stmt->column_int64(0);
    const auto status = parse_verdict(stmt->column_text(1));  // the CHECK allows no other
    if (!status)
      return make_error(fmt::format("{}: sample {} has verdict '{}', which this build does not know", path(), e.sample,
                                    stmt->column_text(1)));
    e.status = *status;
    e.compiled = stmt->column_int64(2) != 0;
    e.correct = stmt->column_int64(3) != 0;
    e.device = stmt->column_text(4);
    e.runtime_ms = stmt->column_optional_double(5);
    e.runtime_mean_ms = stmt->column_optional_double(6);
    e.runtime_std_ms = stmt->column_optional_double(7);
    e.runtime_min_ms = stmt->column_optional_double(8);
    e.runtime_max_ms = stmt->column_optional_double(9);
    e.runtime_p10_ms = stmt->column_optional_double(10);
    e.runtime_p90_ms = stmt->column_optional_double(11);
    e.baseline_ms = stmt->column_optional_double(12);
    e.baseline_mean_ms = stmt->column_optional_double(13);
    e.speedup = stmt->column_optional_double(14);
    e.speedup_mean = stmt->column_optional_double(15);
    e.error_class = stmt->column_optional_text(16);
    e.error_message = stmt->column_optional_text(17);
    e.details_json = stmt->column_text(18);
    e.created = stmt->column_text(19);
    e.compile_path = stmt->column_optional_text(20);
    e.compile_reason = stmt->column_optional_text(21);
    e.compile_seconds = stmt->column_optional_double(22);
    e.compile_log = stmt->column_optional_text(23);
    e.device_busy_ms = stmt->column_optional_double(24);
    e.host_wall_ms = stmt->column_optional_double(25);
    e.custom_kernel_share = stmt->column_optional_double(26);
    e.call_host_ms = stmt->column_optional_double(27);
    e.launch_latency_ms = stmt->column_optional_double(28);
    e.start_span_ms = stmt->column_optional_double(29);
    e.margin = stmt->column_optional_double(30);
    e.memory_floor_ms = stmt->column_optional_double(31);
    rows.push_back(std::move(e));
  }
  if (!v6) return rows;  // no evaluation_flags table before version 6
  // Their flags, in the vocabulary's order; a name this build does not know is an error, not dropped.
  auto flags = db_.prepare(
      "SELECT f.sample, f.flag, f.detail FROM evaluation_flags AS f JOIN samples AS s ON s.id = f.sample "
      "WHERE s.run = ? ORDER BY f.sample",
      context);
  if (!flags.ok()) return flags.error();
  flags->bind(1, run);
  auto at = rows.begin();
  for (;;) {
    auto row = flags->step(context);
    if (!row.ok()) return row.error();
    if (!*row) break;
    const std::int64_t sample = flags->column_int64(0);
    while (at != rows.end() && at->sample < sample) ++at;
    if (at == rows.end() || at->sample != sample) continue;
    const std::string name = flags->column_text(1);
    const auto flag = parse_flag(name);
    if (!flag) return make_error(fmt::format("{}: sample {} has an unknown flag '{}'", path(), sample, name));
    at->flags.push_back({*flag, flags->column_text(2)});
  }
  for (auto& e : rows)
    std::sort(e.flags.begin(), e.flags.end(), [](const FlagRow& a, const FlagRow& b) { return a.flag < b.flag; });
  return rows;
}

Result<std::vector<KernelRow>> Store::kernels(std::int64_t sample) {
  constexpr std::string_view context = "cannot read evaluation_kernels";
  if (schema_version_ < 4) return std::vector<KernelRow>{};  // no per-kernel rows before version 4
  auto stmt = db_.prepare(
      "SELECT name, kind, from_candidate, launches_per_call, ms_per_call, grid, block FROM evaluation_kernels "
      "WHERE sample = ? ORDER BY ms_per_call DESC, name",
      context);
  if (!stmt.ok()) return stmt.error();
  stmt->bind(1, sample);
  std::vector<KernelRow> rows;
  for (;;) {
    auto row = stmt->step(context);
    if (!row.ok()) return row.error();
    if (!*row) break;
    rows.push_back({stmt->column_text(0), stmt->column_text(1), stmt->column_int64(2) != 0, stmt->column_double(3),
                    stmt->column_double(4), stmt->column_text(5), stmt->column_text(6)});
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
