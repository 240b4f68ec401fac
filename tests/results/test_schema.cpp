// Schema creation, STRICT typing, foreign keys, migration from version 1, from version 5 to 6 and
// from 6 to 7 and 7 to 8 (with data, and a failing migration that must change nothing), and read-only stores
// of older versions read without the columns they lack.
#include <doctest/doctest.h>

#include "results/store/judgements.hpp"
#include "results/store/query.hpp"
#include "results/store/run_results.hpp"
#include "results/store/schema.hpp"
#include "test_support.hpp"

using namespace dicebench;
using namespace dicebench::results;
using namespace dicebench::results::testing;

TEST_CASE("a new database gets the newest schema with STRICT tables and WAL") {
  TempDir dir;
  const std::string path = dir.file("sub/dir/results.db");
  {
    Store store = open_store(path);
    CHECK(store.schema_version() == kSchemaVersion);
    CHECK(store.path() == path);
  }
  Database db = raw_open(path);
  CHECK(raw_int(db, "PRAGMA user_version") == kSchemaVersion);
  CHECK(raw_int(db, "PRAGMA application_id") == kApplicationId);
  CHECK(raw_int(db,
                "SELECT count(*) FROM pragma_table_list WHERE name IN ('runs','problems','samples','evaluations') "
                "AND strict = 1") == 4);
  CHECK(raw_int(db, "SELECT count(*) FROM sqlite_schema WHERE type = 'view' AND name = 'sample_results'") == 1);
  CHECK(raw_int(db,
                "SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name IN "
                "('samples_by_run', 'problems_by_run_level')") == 2);
  auto mode = db.prepare("PRAGMA journal_mode", "test");
  REQUIRE(mode.ok());
  REQUIRE(*mode->step("test"));
  CHECK(mode->column_text(0) == "wal");
}

TEST_CASE("STRICT tables reject values of the wrong type") {
  TempDir dir;
  const std::string path = dir.file("results.db");
  { Store store = open_store(path); }
  Database db = raw_open(path);
  auto bad_seed = db.exec(
      "INSERT INTO runs (created, status, model, suite, config, dicebench_version, git_sha, host, seed, repro) "
      "VALUES ('t', 'running', 'm', 's', '{}', 'v', 'g', 'h', 'not a number', '{}')",
      "insert");
  REQUIRE_FALSE(bad_seed.ok());
  CHECK(bad_seed.error().message.find("cannot store TEXT value in INTEGER column runs.seed") != std::string::npos);
  auto bad_status = db.exec(
      "INSERT INTO runs (created, status, model, suite, config, dicebench_version, git_sha, host, seed, repro) "
      "VALUES ('t', 'sleeping', 'm', 's', '{}', 'v', 'g', 'h', 1, '{}')",
      "insert");
  REQUIRE_FALSE(bad_status.ok());
  CHECK(bad_status.error().message.find("CHECK constraint failed") != std::string::npos);
  CHECK(raw_int(db, "SELECT count(*) FROM runs") == 0);
}

TEST_CASE("foreign keys and JSON checks are enforced on the store's connection") {
  TempDir dir;
  const std::string path = dir.file("results.db");
  Store store = open_store(path);
  const auto run = require_ok(store.create_run(sample_run()));
  require_ok(store.add_problems(run, {problem(1, 1, "Add")}));

  auto orphan = store.insert_sample(new_sample(run, 99, 0));
  REQUIRE_FALSE(orphan.ok());
  CHECK(orphan.error().message.find("problem 1/99 is not registered in run 1") != std::string::npos);

  StoredEvaluation orphan_evaluation;
  orphan_evaluation.sample = 12345;
  orphan_evaluation.device = "cpu";
  auto no_sample = store.insert_evaluation(orphan_evaluation);
  REQUIRE_FALSE(no_sample.ok());
  CHECK(no_sample.error().message.find("no sample 12345") != std::string::npos);

  auto no_run = store.add_problems(77, {problem(1, 1, "Add")});
  REQUIRE_FALSE(no_run.ok());
  CHECK(no_run.error().message == "no run 77 in " + path);

  NewRun bad = sample_run();
  bad.config_json = "{not json";
  auto bad_run = store.create_run(bad);
  REQUIRE_FALSE(bad_run.ok());
  CHECK(bad_run.error().message.find("json_valid(config)") != std::string::npos);

  // Deleting a run cascades to its problems and samples.
  require_ok(store.insert_sample(new_sample(run, 1, 0)));
  require_ok(store.database().exec("DELETE FROM runs", "delete"));
  CHECK(require_ok(store.database().query_int("SELECT count(*) FROM samples", "count")) == 0);
  CHECK(require_ok(store.database().query_int("SELECT count(*) FROM problems", "count")) == 0);
}

TEST_CASE("create_schema_version makes an older database") {
  TempDir dir;
  const std::string path = dir.file("v1.db");
  require_ok(create_schema_version(path, 1));
  Database db = raw_open(path);
  CHECK(raw_int(db, "PRAGMA user_version") == 1);
  CHECK(raw_int(db, "SELECT count(*) FROM sqlite_schema WHERE name = 'sample_results'") == 0);
  CHECK(raw_int(db, "SELECT count(*) FROM sqlite_schema WHERE type = 'table'") == 4);

  auto again = create_schema_version(path, 1);
  CHECK_FALSE(again.ok());
  auto out_of_range = create_schema_version(dir.file("newer.db"), kSchemaVersion + 1);
  CHECK_FALSE(out_of_range.ok());
}

TEST_CASE("opening a version 1 database migrates it, keeping its data, and the view works") {
  TempDir dir;
  const std::string path = dir.file("v1.db");
  require_ok(create_schema_version(path, 1));
  {
    Database db = raw_open(path);
    raw_exec(db, R"sql(
      INSERT INTO runs (id, created, status, model, suite, config, dicebench_version, git_sha, host, seed, repro)
        VALUES (1, '2026-01-01T00:00:00Z', 'finished', 'old-model', 'kernelbench-l1', '{"a":1}', '0.0.9', 'sha',
                'h', 7, '{}');
      INSERT INTO problems VALUES (1, 1, 1, 'Add', 'level1/1_Add.py', 'c1', 'p1');
      INSERT INTO problems VALUES (1, 2, 1, 'Mul', 'level1/2_Mul.py', 'c2', 'p2');
      INSERT INTO samples (id, run, problem_id, sample_index, prompt_hash, completion, candidate, extraction, gen_stats, created)
        VALUES (10, 1, 1, 0, 'p1', 'text', 'code', 'ok', '{}', 't'),
               (11, 1, 1, 1, 'p1', 'text', NULL, 'no_code_block', '{}', 't'),
               (12, 1, 2, 0, 'p2', 'text', 'code', 'ok', '{}', 't');
      INSERT INTO evaluations (sample, status, compiled, correct, device, runtime_ms, baseline_ms, speedup, created)
        VALUES (10, 'correct', 1, 1, 'cuda:0', 0.5, 1.0, 2.0, 't');
    )sql");
  }
  {
    Store store = open_store(path);
    CHECK(store.schema_version() == kSchemaVersion);
    const auto runs = require_ok(store.runs());
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].model == "old-model");
    CHECK(runs[0].status == RunStatus::finished);
    CHECK(require_ok(store.sample_count(1)) == 3);
    CHECK(require_ok(store.evaluations(1)).size() == 1);
  }
  Database db = raw_open(path);
  CHECK(raw_int(db, "PRAGMA user_version") == kSchemaVersion);
  auto query = require_ok(run_query(path,
                                    "SELECT sample, verdict, compiled, correct, speedup, level, problem "
                                    "FROM sample_results ORDER BY sample"));
  REQUIRE(query.rows.size() == 3);
  CHECK(std::get<std::string>(query.rows[0][1]) == "correct");
  CHECK(std::get<std::int64_t>(query.rows[0][2]) == 1);
  CHECK(std::get<double>(query.rows[0][4]) == 2.0);
  CHECK(std::get<std::string>(query.rows[0][6]) == "Add");
  CHECK(std::get<std::string>(query.rows[1][1]) == "extraction_failed");  // no candidate, no evaluation
  CHECK(std::get<std::int64_t>(query.rows[1][2]) == 0);
  CHECK(std::holds_alternative<std::monostate>(query.rows[2][1]));  // pending
  CHECK(std::holds_alternative<std::monostate>(query.rows[2][4]));
}

TEST_CASE("a migration that fails changes nothing") {
  TempDir dir;
  const std::string path = dir.file("v1.db");
  require_ok(create_schema_version(path, 1));
  {
    Database db = raw_open(path);
    raw_exec(db, R"sql(
      INSERT INTO runs (id, created, status, model, suite, config, dicebench_version, git_sha, host, seed, repro)
        VALUES (1, 't', 'running', 'm', 's', '{}', 'v', 'g', 'h', 1, '{}');
      CREATE TABLE sample_results (x INTEGER);  -- blocks step 2, which creates a view of that name
      INSERT INTO sample_results VALUES (5);
    )sql");
  }
  auto store = Store::open(path);
  REQUIRE_FALSE(store.ok());
  CHECK(store.error().message.find(path) != std::string::npos);
  CHECK(store.error().message.find("cannot migrate schema to version 2") != std::string::npos);

  Database db = raw_open(path);
  CHECK(raw_int(db, "PRAGMA user_version") == 1);
  CHECK(raw_int(db, "SELECT count(*) FROM runs") == 1);
  CHECK(raw_int(db, "SELECT x FROM sample_results") == 5);
  CHECK(raw_int(db, "SELECT count(*) FROM sqlite_schema WHERE type = 'view'") == 0);
}

TEST_CASE("a read-only store opens an older schema without migrating it") {
  TempDir dir;
  const std::string path = dir.file("v1.db");
  require_ok(create_schema_version(path, 1));
  const std::string before = read_bytes(path);
  auto store = Store::open(path, OpenMode::ReadOnly);
  REQUIRE_MESSAGE(store.ok(), (store.ok() ? "" : store.error().message));
  CHECK(store->schema_version() == 1);
  CHECK(require_ok(store->runs()).empty());
  CHECK_MESSAGE(read_bytes(path) == before, "the file changed");
}

namespace {

// A version 5 database (before flags, margins and traits) with one run: problem 1 correct with
// its timing split, problem 2 output_mismatch.
void fill_version_5(const std::string& path) {
  require_ok(create_schema_version(path, 5));
  Database db = raw_open(path);
  raw_exec(db, R"sql(
    INSERT INTO runs (id, created, status, model, suite, config, dicebench_version, git_sha, host, seed, repro)
      VALUES (1, '2026-11-01T00:00:00Z', 'finished', 'm', 'kernelbench-l1', '{}', '0.1.0', 'sha', 'h', 1, '{}');
    INSERT INTO problems VALUES (1, 1, 1, 'Add', 'level1/1_Add.py', 'c1', 'p1');
    INSERT INTO problems VALUES (1, 2, 1, 'Mul', 'level1/2_Mul.py', 'c2', 'p2');
    INSERT INTO samples (id, run, problem_id, sample_index, prompt_hash, completion, candidate, extraction, gen_stats, created)
      VALUES (10, 1, 1, 0, 'p1', 'text', 'code', 'ok', '{}', 't'),
             (11, 1, 2, 0, 'p2', 'text', 'code', 'ok', '{}', 't');
    INSERT INTO evaluations (sample, status, compiled, correct, device, runtime_ms, baseline_ms, speedup, created,
                             compile_path, call_host_ms)
      VALUES (10, 'correct', 1, 1, 'cuda:0', 0.5, 1.0, 2.0, 't', 'nvrtc', 0.1),
             (11, 'output_mismatch', 1, 0, 'cuda:0', NULL, NULL, NULL, 't', 'nvrtc', NULL);
  )sql");
}

}  // namespace

TEST_CASE("a version 5 database migrates to 6 (and on) with its data, and the view shows margins, flags and traits") {
  TempDir dir;
  const std::string path = dir.file("v5.db");
  fill_version_5(path);
  {
    Store store = open_store(path);
    CHECK(store.schema_version() == kSchemaVersion);
    const auto evaluations = require_ok(store.evaluations(1));
    REQUIRE(evaluations.size() == 2);
    CHECK(evaluations[0].call_host_ms == std::optional<double>(0.1));
    CHECK_FALSE(evaluations[0].margin);
    CHECK(evaluations[0].flags.empty());
    CHECK_FALSE(require_ok(store.problems(1))[0].traits_json);
    require_ok(store.set_problem_traits(1, {1, 2}, R"(["zeros_pass"])"));
  }
  Database db = raw_open(path);
  CHECK(raw_int(db, "PRAGMA user_version") == kSchemaVersion);
  CHECK(raw_int(db,
                "SELECT count(*) FROM pragma_table_list WHERE name IN ('evaluation_flags','problem_traits',"
                "'device_bandwidth') AND strict = 1") == 3);
  raw_exec(db,
           "UPDATE evaluations SET margin = 1.4 WHERE sample = 11;"
           "INSERT INTO evaluation_flags (sample, flag, detail) VALUES (11, 'borderline', 'margin 1.4');");
  auto query = require_ok(
      run_query(path, "SELECT sample, verdict, margin, flags, problem_traits FROM sample_results ORDER BY sample"));
  REQUIRE(query.rows.size() == 2);
  CHECK(std::holds_alternative<std::monostate>(query.rows[0][2]));
  CHECK(std::get<std::string>(query.rows[0][3]) == "[]");
  CHECK(std::holds_alternative<std::monostate>(query.rows[0][4]));
  CHECK(std::get<double>(query.rows[1][2]) == 1.4);
  CHECK(std::get<std::string>(query.rows[1][3]) == R"(["borderline"])");
  CHECK(std::get<std::string>(query.rows[1][4]) == R"(["zeros_pass"])");
  // A margin below zero is refused.
  CHECK_FALSE(db.exec("UPDATE evaluations SET margin = -1 WHERE sample = 10", "update").ok());
}

TEST_CASE("a read-only version 5 database reads problems, evaluations and results without the new fields") {
  TempDir dir;
  const std::string path = dir.file("v5.db");
  fill_version_5(path);
  const std::string before = read_bytes(path);
  auto store = Store::open(path, OpenMode::ReadOnly);
  REQUIRE_MESSAGE(store.ok(), (store.ok() ? "" : store.error().message));
  CHECK(store->schema_version() == 5);
  const auto problems = require_ok(store->problems(1));
  REQUIRE(problems.size() == 2);
  CHECK_FALSE(problems[0].traits_json);
  const auto evaluations = require_ok(store->evaluations(1));
  REQUIRE(evaluations.size() == 2);
  CHECK(evaluations[0].compile_path == std::optional<std::string>("nvrtc"));
  CHECK(evaluations[0].call_host_ms == std::optional<double>(0.1));
  CHECK_FALSE(evaluations[0].margin);
  CHECK(evaluations[1].flags.empty());
  const RunResults results = require_ok(load_run_results(*store, 1));
  REQUIRE(results.samples.size() == 2);
  CHECK(results.samples[0].correct);
  CHECK_FALSE(results.samples[0].margin);
  CHECK(results.samples[1].flags.empty());
  CHECK_FALSE(results.samples[1].problem_traits);
  CHECK_MESSAGE(read_bytes(path) == before, "the file changed");
}

TEST_CASE("a read-only version 3 database reads evaluations and kernels without the columns it lacks") {
  TempDir dir;
  const std::string path = dir.file("v3.db");
  make_version3_database(path);
  auto store = Store::open(path, OpenMode::ReadOnly);
  REQUIRE(store.ok());
  const auto evaluations = require_ok(store->evaluations(1));
  REQUIRE(evaluations.size() == 1);
  CHECK(evaluations[0].speedup == std::optional<double>(2.0));
  CHECK_FALSE(evaluations[0].compile_path);
  CHECK(require_ok(store->kernels(1)).empty());
}

TEST_CASE("a version 6 database migrates to 7: problems keyed by level, samples with their level, nothing lost") {
  TempDir dir;
  const std::string path = dir.file("v6.db");
  require_ok(create_schema_version(path, 6));
  {
    Database db = raw_open(path);
    raw_exec(db, R"sql(
      INSERT INTO runs (id, created, status, model, suite, config, dicebench_version, git_sha, host, seed, repro)
        VALUES (1, 't', 'finished', 'm', 'kernelbench-l2', '{}', '0.1.0', 'sha', 'h', 1, '{}'),
               (2, 't', 'finished', 'm', 'kernelbench-l1', '{}', '0.1.0', 'sha', 'h', 1, '{}');
      INSERT INTO problems (run, problem_id, level, name, path, content_hash, prompt_hash, traits)
        VALUES (1, 1, 2, 'Gemm', 'level2/1_Gemm.py', 'c1', 'p1', '["zeros_pass"]'),
               (2, 1, 1, 'Add', 'level1/1_Add.py', 'c2', 'p2', NULL);
      INSERT INTO samples (id, run, problem_id, sample_index, prompt_hash, completion, candidate, extraction, gen_stats, created)
        VALUES (10, 1, 1, 0, 'p1', 'text', 'code', 'ok', '{}', 't'),
               (11, 1, 1, 1, 'p1', 'text', NULL, 'no_code_block', '{}', 't'),
               (12, 2, 1, 0, 'p2', 'text', 'code', 'ok', '{}', 't');
      INSERT INTO evaluations (sample, status, compiled, correct, device, speedup, created, margin)
        VALUES (10, 'correct', 1, 1, 'cpu', 2.0, 't', 0.9);
      INSERT INTO evaluation_flags (sample, flag, detail) VALUES (10, 'borderline', 'margin 0.9');
      INSERT INTO evaluation_kernels (sample, name, kind, from_candidate, launches_per_call, ms_per_call, grid, block)
        VALUES (10, 'k', 'kernel', 1, 1, 0.5, '1,1,1', '32,1,1');
    )sql");
  }
  {
    Store store = open_store(path);
    CHECK(store.schema_version() == kSchemaVersion);
    const auto samples = require_ok(store.samples(1));
    REQUIRE(samples.size() == 2);
    CHECK(samples[0].id == 10);
    CHECK(samples[0].level == 2);
    CHECK(require_ok(store.samples(2))[0].level == 1);
    const auto evaluations = require_ok(store.evaluations(1));
    REQUIRE(evaluations.size() == 1);
    CHECK(evaluations[0].flags.size() == 1);
    CHECK(require_ok(store.kernels(10)).size() == 1);
    CHECK(require_ok(store.problems(1))[0].traits_json == std::optional<std::string>(R"(["zeros_pass"])"));
    // A run may now hold problem 1 of two levels, each with its own samples.
    require_ok(store.add_problems(1, {problem(1, 3, "Mlp")}));
    require_ok(store.insert_sample(new_sample(1, 1, 0, true, 3)));
    const RunResults results = require_ok(load_run_results(store, 1));
    REQUIRE(results.samples.size() == 3);
    CHECK(results.samples[0].level == 2);
    CHECK(results.samples[2].level == 3);
    CHECK(results.samples[2].pending);
    CHECK(results.samples[0].problem_traits == std::optional<std::vector<std::string>>({"zeros_pass"}));
  }
  Database db = raw_open(path);
  CHECK(raw_int(db, "SELECT count(*) FROM pragma_foreign_key_check") == 0);
  CHECK(raw_int(db, "SELECT count(*) FROM pragma_table_list WHERE name IN ('problems','samples') AND strict = 1") == 2);
  CHECK(raw_int(db, "SELECT count(*) FROM sample_results WHERE run = 1 AND level = 3") == 1);
  CHECK(
      raw_int(
          db,
          "SELECT count(*) FROM sample_results WHERE run = 1 AND verdict = 'correct' AND flags = '[\"borderline\"]'") ==
      1);
  // Deleting a run still cascades through the rebuilt tables.
  raw_exec(db, "PRAGMA foreign_keys = ON; DELETE FROM runs WHERE id = 1;");
  CHECK(raw_int(db, "SELECT count(*) FROM samples") == 1);
  CHECK(raw_int(db, "SELECT count(*) FROM evaluations") == 0);
  CHECK(raw_int(db, "SELECT count(*) FROM evaluation_kernels") == 0);
}

TEST_CASE("a version 6 database with a sample whose problem is missing is not migrated, and keeps everything") {
  TempDir dir;
  const std::string path = dir.file("v6.db");
  require_ok(create_schema_version(path, 6));
  {
    Database db = raw_open(path);
    raw_exec(db, R"sql(
      PRAGMA foreign_keys = OFF;
      INSERT INTO runs (id, created, status, model, suite, config, dicebench_version, git_sha, host, seed, repro)
        VALUES (1, 't', 'finished', 'm', 'kernelbench-l1', '{}', '0.1.0', 'sha', 'h', 1, '{}');
      INSERT INTO samples (id, run, problem_id, sample_index, prompt_hash, completion, candidate, extraction, gen_stats, created)
        VALUES (10, 1, 5, 0, 'p', 'text', 'code', 'ok', '{}', 't');
    )sql");
  }
  auto store = Store::open(path);
  REQUIRE_FALSE(store.ok());
  CHECK(store.error().message.find("cannot migrate schema to version 7") != std::string::npos);
  Database db = raw_open(path);
  CHECK(raw_int(db, "PRAGMA user_version") == 6);
  CHECK(raw_int(db, "SELECT count(*) FROM samples WHERE id = 10") == 1);
}

TEST_CASE("a version 7 database migrates to 8: samples get extraction details, a JSON object or NULL") {
  TempDir dir;
  const std::string path = dir.file("v7.db");
  require_ok(create_schema_version(path, 7));
  Store store = open_store(path);
  CHECK(store.schema_version() == kSchemaVersion);
  const auto run = require_ok(store.create_run(sample_run()));
  require_ok(store.add_problems(run, {problem(1, 1, "Add")}));
  require_ok(store.insert_sample(new_sample(run, 1, 0)));  // no details: NULL
  NewSample infill = new_sample(run, 1, 1);
  infill.extraction_details_json = R"({"infill_exact_match":false,"infill_edit_distance":7,"suite_own":1})";
  require_ok(store.insert_sample(infill));
  const RunResults results = require_ok(load_run_results(store, run));
  REQUIRE(results.samples.size() == 2);
  CHECK_FALSE(results.samples[0].infill_exact_match);
  CHECK(results.samples[1].infill_exact_match == false);
  CHECK(results.samples[1].infill_edit_distance == 7);
  NewSample not_object = new_sample(run, 1, 2);
  not_object.extraction_details_json = "[1]";
  CHECK_FALSE(store.insert_sample(not_object).ok());
  Database db = raw_open(path);
  CHECK(raw_int(
            db,
            "SELECT json_extract(extraction_details, '$.infill_edit_distance') FROM samples WHERE sample_index = 1") ==
        7);
}

TEST_CASE("a version 8 database migrates to 9: the reward service's judgements, stored and found by id and settings") {
  TempDir dir;
  const std::string path = dir.file("v8.db");
  require_ok(create_schema_version(path, 8));
  Store store = open_store(path);
  CHECK(store.schema_version() == kSchemaVersion);
  Judgement judged;
  judged.id = "item-1";
  judged.problem = "kernelbench/level1/1";
  judged.candidate = "class ModelNew: ...";
  judged.evaluation = Evaluation{};
  judged.evaluation->verdict = Verdict::correct;
  judged.evaluation->speedup = 1.5;
  judged.reward = 1.0;
  judged.reward_shape = "correctness";
  require_ok(put_judgement(store, judged, "settings-a"));
  const auto found = require_ok(find_judgement(store, "item-1", "settings-a"));
  REQUIRE(found.has_value());
  CHECK(found->candidate == judged.candidate);
  CHECK(found->evaluation->verdict == Verdict::correct);
  CHECK(found->reward == 1.0);
  // Judged with other settings, it is not this id's answer.
  CHECK_FALSE(require_ok(find_judgement(store, "item-1", "settings-b")).has_value());
  // The columns to query it by.
  Database db = raw_open(path);
  CHECK(raw_int(db,
                "SELECT count(*) FROM judgements WHERE status = 'judged' AND verdict = 'correct' AND speedup = 1.5 "
                "AND reward = 1.0 AND reward_shape = 'correctness'") == 1);
  // The same id again replaces it (a retried harness failure is judged anew).
  judged.evaluation->verdict = Verdict::timeout;
  require_ok(put_judgement(store, judged, "settings-a"));
  CHECK(raw_int(db, "SELECT count(*) FROM judgements") == 1);
  CHECK(require_ok(find_judgement(store, "item-1", "settings-a"))->evaluation->verdict == Verdict::timeout);
}
