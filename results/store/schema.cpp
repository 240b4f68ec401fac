// The results schema as ordered migration steps, and the version checks run on every open.
#include "results/store/schema.hpp"

#include "core/spec/evaluation_store.hpp"

#include <sqlite3.h>

#include <fmt/format.h>

#include <string_view>

namespace dicebench::results {
namespace {

struct MigrationStep {
  int version;  // user_version after this step
  std::string_view sql;
};

constexpr std::string_view kVersion1 = R"sql(
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  created TEXT NOT NULL,
  finished TEXT,
  status TEXT NOT NULL CHECK (status IN ('running','finished','interrupted','failed')),
  model TEXT NOT NULL,
  suite TEXT NOT NULL,
  config TEXT NOT NULL CHECK (json_valid(config)),
  dicebench_version TEXT NOT NULL,
  git_sha TEXT NOT NULL,
  host TEXT NOT NULL,
  gpu TEXT,
  driver_version TEXT,
  cuda_version TEXT,
  torch_version TEXT,
  seed INTEGER NOT NULL,
  repro TEXT NOT NULL CHECK (json_valid(repro))
) STRICT;

CREATE TABLE problems (
  run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  problem_id INTEGER NOT NULL,
  level INTEGER NOT NULL,
  name TEXT NOT NULL,
  path TEXT NOT NULL,
  content_hash TEXT NOT NULL,
  prompt_hash TEXT NOT NULL,
  PRIMARY KEY (run, problem_id)
) STRICT;

CREATE TABLE samples (
  id INTEGER PRIMARY KEY,
  run INTEGER NOT NULL,
  problem_id INTEGER NOT NULL,
  sample_index INTEGER NOT NULL CHECK (sample_index >= 0),
  prompt_hash TEXT NOT NULL,
  completion TEXT NOT NULL,
  candidate TEXT,
  extraction TEXT NOT NULL CHECK (extraction IN ('ok','no_code_block')),
  gen_stats TEXT NOT NULL CHECK (json_valid(gen_stats)),
  created TEXT NOT NULL,
  UNIQUE (run, problem_id, sample_index),
  FOREIGN KEY (run, problem_id) REFERENCES problems(run, problem_id) ON DELETE CASCADE
) STRICT;

CREATE INDEX samples_by_run ON samples(run);
CREATE INDEX problems_by_run_level ON problems(run, level);
)sql";

// One row per sample with its verdict: the evaluation's status, 'extraction_failed' for a
// sample without a candidate and without an evaluation, NULL while evaluation is pending.
constexpr std::string_view kVersion2 = R"sql(
CREATE VIEW sample_results AS
SELECT
  s.run AS run,
  s.problem_id AS problem_id,
  p.level AS level,
  p.name AS problem,
  s.sample_index AS sample_index,
  s.id AS sample,
  CASE
    WHEN e.sample IS NOT NULL THEN e.status
    WHEN s.candidate IS NULL THEN '{extraction_failed}'
    ELSE NULL
  END AS verdict,
  CASE WHEN e.sample IS NULL AND s.candidate IS NULL THEN 0 ELSE e.compiled END AS compiled,
  CASE WHEN e.sample IS NULL AND s.candidate IS NULL THEN 0 ELSE e.correct END AS correct,
  e.runtime_ms AS runtime_ms,
  e.baseline_ms AS baseline_ms,
  e.speedup AS speedup
FROM samples AS s
JOIN problems AS p ON p.run = s.run AND p.problem_id = s.problem_id
LEFT JOIN evaluations AS e ON e.sample = s.id;
)sql";

// Baseline timings of reference programs, shared across runs that time on the same GPU, with the
// same torch and the same method (eager or compiled, and the timer).
constexpr std::string_view kVersion3 = R"sql(
CREATE TABLE baselines (
  problem_hash TEXT NOT NULL,
  device_name TEXT NOT NULL,
  torch_version TEXT NOT NULL,
  method TEXT NOT NULL,
  median_ms REAL NOT NULL,
  mean_ms REAL NOT NULL,
  std_ms REAL NOT NULL,
  min_ms REAL NOT NULL,
  max_ms REAL NOT NULL,
  p10_ms REAL NOT NULL,
  p90_ms REAL NOT NULL,
  trials INTEGER NOT NULL CHECK (trials >= 1),
  created TEXT NOT NULL,
  PRIMARY KEY (problem_hash, device_name, torch_version, method)
) STRICT;
)sql";

// What issue 3's evaluator adds: how the candidate was compiled (the fast NVRTC path or torch's own
// toolchain, and why), its compile log, device-busy and host wall time of a timed call, the share
// of device time spent in kernels compiled from the candidate, and the per-kernel breakdown.
constexpr std::string_view kVersion4 = R"sql(

-- Device work of one timed call of the candidate, per kernel (or memcpy/memset) name and launch
-- shape, averaged over the timed calls.
CREATE TABLE evaluation_kernels (
  sample INTEGER NOT NULL REFERENCES evaluations(sample) ON DELETE CASCADE,
  name TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('kernel','memcpy','memset')),
  from_candidate INTEGER NOT NULL CHECK (from_candidate IN (0,1)),
  launches_per_call REAL NOT NULL,
  ms_per_call REAL NOT NULL,
  grid TEXT NOT NULL,
  block TEXT NOT NULL
) STRICT;
CREATE INDEX evaluation_kernels_by_sample ON evaluation_kernels(sample);

DROP VIEW sample_results;
CREATE VIEW sample_results AS
SELECT
  s.run AS run,
  s.problem_id AS problem_id,
  p.level AS level,
  p.name AS problem,
  s.sample_index AS sample_index,
  s.id AS sample,
  CASE
    WHEN e.sample IS NOT NULL THEN e.status
    WHEN s.candidate IS NULL THEN '{extraction_failed}'
    ELSE NULL
  END AS verdict,
  CASE WHEN e.sample IS NULL AND s.candidate IS NULL THEN 0 ELSE e.compiled END AS compiled,
  CASE WHEN e.sample IS NULL AND s.candidate IS NULL THEN 0 ELSE e.correct END AS correct,
  e.runtime_ms AS runtime_ms,
  e.baseline_ms AS baseline_ms,
  e.speedup AS speedup,
  e.compile_path AS compile_path,
  e.custom_kernel_share AS custom_kernel_share
FROM samples AS s
JOIN problems AS p ON p.run = s.run AND p.problem_id = s.problem_id
LEFT JOIN evaluations AS e ON e.sample = s.id;
)sql";

// How a timed call divides (medians over the timed calls; harness/timing/README.md): the host's own
// time in the call, the latency from the harness's start marker to the call's first device work,
// and the span from that marker to its last device work (what a timer started before the call
// would measure). runtime_ms is the longer of the device span and call_host_ms.
constexpr std::string_view kVersion5 = R"sql(
)sql";

// Issue 13's verdict qualifiers. margin: the worst comparison's |c - r| / (atol + rtol * |r|) over
// every compared call (correctness trials and the checked timed calls); memory_floor_ms: the time to
// read the inputs and write the outputs at the GPU's measured bandwidth. evaluation_flags: flags that
// qualify a verdict (core/spec/vocabulary.toml). problems.traits: the problem's degenerate traits as a JSON
// array (NULL until checked), from the problem_traits cache, which is keyed by problem content hash,
// device and tolerance mode. device_bandwidth: the measured memory bandwidth per device.
constexpr std::string_view kVersion6 = R"sql(
ALTER TABLE problems ADD COLUMN traits TEXT CHECK (traits IS NULL OR json_valid(traits));

CREATE TABLE evaluation_flags (
  sample INTEGER NOT NULL REFERENCES evaluations(sample) ON DELETE CASCADE,
  flag TEXT NOT NULL,
  detail TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (sample, flag)
) STRICT;

CREATE TABLE problem_traits (
  problem_hash TEXT NOT NULL,
  device_name TEXT NOT NULL,
  tolerance TEXT NOT NULL,
  traits TEXT NOT NULL CHECK (json_valid(traits)),
  details TEXT NOT NULL CHECK (json_valid(details)),
  created TEXT NOT NULL,
  PRIMARY KEY (problem_hash, device_name, tolerance)
) STRICT;

CREATE TABLE device_bandwidth (
  device_name TEXT NOT NULL,
  method TEXT NOT NULL,
  bytes_per_second REAL NOT NULL CHECK (bytes_per_second > 0),
  created TEXT NOT NULL,
  PRIMARY KEY (device_name, method)
) STRICT;

DROP VIEW sample_results;
CREATE VIEW sample_results AS
SELECT
  s.run AS run,
  s.problem_id AS problem_id,
  p.level AS level,
  p.name AS problem,
  s.sample_index AS sample_index,
  s.id AS sample,
  CASE
    WHEN e.sample IS NOT NULL THEN e.status
    WHEN s.candidate IS NULL THEN '{extraction_failed}'
    ELSE NULL
  END AS verdict,
  CASE WHEN e.sample IS NULL AND s.candidate IS NULL THEN 0 ELSE e.compiled END AS compiled,
  CASE WHEN e.sample IS NULL AND s.candidate IS NULL THEN 0 ELSE e.correct END AS correct,
  e.runtime_ms AS runtime_ms,
  e.baseline_ms AS baseline_ms,
  e.speedup AS speedup,
  e.compile_path AS compile_path,
  e.custom_kernel_share AS custom_kernel_share,
  e.margin AS margin,
  (SELECT json_group_array(f.flag) FROM evaluation_flags AS f WHERE f.sample = s.id) AS flags,
  p.traits AS problem_traits
FROM samples AS s
JOIN problems AS p ON p.run = s.run AND p.problem_id = s.problem_id
LEFT JOIN evaluations AS e ON e.sample = s.id;
)sql";

// Issue 14's whole benchmark in one run: a run may cover several levels, and KernelBench numbers
// problems within a level, so a problem is (run, level, problem_id) and each sample carries its
// level. SQLite cannot change a key in place: problems and samples are rebuilt (with foreign keys
// off, as SQLite's "making other kinds of table schema changes" says; migrate() does that and
// checks the keys before committing), keeping every row and every samples.id: a sample without its
// problem (possible only where foreign keys were off) has no level, and NOT NULL refuses the step.
constexpr std::string_view kVersion7 = R"sql(
DROP VIEW sample_results;

CREATE TABLE problems_v7 (
  run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  level INTEGER NOT NULL,
  problem_id INTEGER NOT NULL,
  name TEXT NOT NULL,
  path TEXT NOT NULL,
  content_hash TEXT NOT NULL,
  prompt_hash TEXT NOT NULL,
  traits TEXT CHECK (traits IS NULL OR json_valid(traits)),
  PRIMARY KEY (run, level, problem_id)
) STRICT;
INSERT INTO problems_v7 (run, level, problem_id, name, path, content_hash, prompt_hash, traits)
  SELECT run, level, problem_id, name, path, content_hash, prompt_hash, traits FROM problems;

CREATE TABLE samples_v7 (
  id INTEGER PRIMARY KEY,
  run INTEGER NOT NULL,
  level INTEGER NOT NULL,
  problem_id INTEGER NOT NULL,
  sample_index INTEGER NOT NULL CHECK (sample_index >= 0),
  prompt_hash TEXT NOT NULL,
  completion TEXT NOT NULL,
  candidate TEXT,
  extraction TEXT NOT NULL CHECK (extraction IN ('ok','no_code_block')),
  gen_stats TEXT NOT NULL CHECK (json_valid(gen_stats)),
  created TEXT NOT NULL,
  UNIQUE (run, level, problem_id, sample_index),
  FOREIGN KEY (run, level, problem_id) REFERENCES problems(run, level, problem_id) ON DELETE CASCADE
) STRICT;
INSERT INTO samples_v7 (id, run, level, problem_id, sample_index, prompt_hash, completion, candidate, extraction,
                        gen_stats, created)
  SELECT s.id, s.run, p.level, s.problem_id, s.sample_index, s.prompt_hash, s.completion, s.candidate, s.extraction,
         s.gen_stats, s.created
  FROM samples AS s LEFT JOIN problems AS p ON p.run = s.run AND p.problem_id = s.problem_id;

DROP TABLE samples;
DROP TABLE problems;
ALTER TABLE problems_v7 RENAME TO problems;
ALTER TABLE samples_v7 RENAME TO samples;
CREATE INDEX samples_by_run ON samples(run);
CREATE INDEX problems_by_run_level ON problems(run, level);

CREATE VIEW sample_results AS
SELECT
  s.run AS run,
  s.problem_id AS problem_id,
  p.level AS level,
  p.name AS problem,
  s.sample_index AS sample_index,
  s.id AS sample,
  CASE
    WHEN e.sample IS NOT NULL THEN e.status
    WHEN s.candidate IS NULL THEN '{extraction_failed}'
    ELSE NULL
  END AS verdict,
  CASE WHEN e.sample IS NULL AND s.candidate IS NULL THEN 0 ELSE e.compiled END AS compiled,
  CASE WHEN e.sample IS NULL AND s.candidate IS NULL THEN 0 ELSE e.correct END AS correct,
  e.runtime_ms AS runtime_ms,
  e.baseline_ms AS baseline_ms,
  e.speedup AS speedup,
  e.compile_path AS compile_path,
  e.custom_kernel_share AS custom_kernel_share,
  e.margin AS margin,
  (SELECT json_group_array(f.flag) FROM evaluation_flags AS f WHERE f.sample = s.id) AS flags,
  p.traits AS problem_traits
FROM samples AS s
JOIN problems AS p ON p.run = s.run AND p.level = s.level AND p.problem_id = s.problem_id
LEFT JOIN evaluations AS e ON e.sample = s.id;
)sql";

// Issue 27's kernel infilling: what the suite measured about a sample's answer as it extracted the
// candidate (a JSON object; keys the host reads: plugins/include/dicebench/extraction_details.hpp:
// infill_exact_match, infill_edit_distance); NULL where the suite said nothing.
constexpr std::string_view kVersion8 = R"sql(
ALTER TABLE samples ADD COLUMN extraction_details TEXT
  CHECK (extraction_details IS NULL OR (json_valid(extraction_details) AND json_type(extraction_details) = 'object'));
)sql";

// Issue 37's reward service: one row per judged item (by the caller's id), its whole record
// (core/spec's Judgement JSON: completion, candidate, evaluation, reward) and the columns to query
// it by; the service answers a repeated id from here.
constexpr std::string_view kVersion9 = R"sql(
CREATE TABLE judgements (
  id TEXT PRIMARY KEY,
  created TEXT NOT NULL,
  settings TEXT NOT NULL,
  problem TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('judged','problem_failed','harness_failed','cancelled')),
  verdict TEXT CHECK (verdict IS NULL OR verdict IN ('extraction_failed','compile_failed','runtime_error','timeout',
    'crashed','shape_mismatch','dtype_mismatch','output_mismatch','correct')),
  speedup REAL,
  reward REAL,
  reward_shape TEXT,
  seconds REAL,
  record TEXT NOT NULL CHECK (json_valid(record) AND json_type(record) = 'object')
) STRICT;
CREATE INDEX judgements_by_problem ON judgements(problem, status);
)sql";

constexpr MigrationStep kSteps[] = {
    {1, kVersion1}, {2, kVersion2}, {3, kVersion3}, {4, kVersion4}, {5, kVersion5},
    {6, kVersion6}, {7, kVersion7}, {8, kVersion8}, {9, kVersion9},
};
static_assert(sizeof(kSteps) / sizeof(kSteps[0]) == kStepsVersion,
              "one migration step per schema version up to kStepsVersion");

// The SQL of the step to `version`: the evaluations columns it added (generated from
// core/spec/evaluation.toml: the table itself in version 1), then the step's own where one is written
// here, with {extraction_failed} the verdict's name.
std::string step_sql(int version) {
  std::string sql = evaluation_columns_sql(version);
  for (const MigrationStep& step : kSteps)
    if (step.version == version) sql += step.sql;
  const std::string placeholder = "{extraction_failed}";
  for (auto at = sql.find(placeholder); at != std::string::npos; at = sql.find(placeholder, at))
    sql.replace(at, placeholder.size(), verdict_name(Verdict::extraction_failed));
  return sql;
}

}  // namespace

Result<int> read_schema_version(Database& db) {
  auto version = db.query_int("PRAGMA user_version", "cannot read schema version");
  if (!version.ok()) return version.error();
  auto application = db.query_int("PRAGMA application_id", "cannot read application id");
  if (!application.ok()) return application.error();
  if (*application != 0 && *application != kApplicationId) {
    return make_error(fmt::format("{}: not a dicebench database (application id {:#x} belongs to another program)",
                                  db.path(), *application));
  }
  if (*version != 0 && *application != kApplicationId) {
    return make_error(
        fmt::format("{}: not a dicebench database (user_version {} was set by another program)", db.path(), *version));
  }
  if (*version > kSchemaVersion) {
    return make_error(fmt::format("{} was written by a newer dicebench (schema version {}, this build knows up to {})",
                                  db.path(), *version, kSchemaVersion));
  }
  if (*version < 0) {
    return make_error(fmt::format("{}: not a dicebench database (schema version {})", db.path(), *version));
  }
  if (*version == 0) {
    auto objects = db.query_int("SELECT count(*) FROM sqlite_schema", "cannot read schema");
    if (!objects.ok()) return objects.error();
    if (*objects != 0) {
      return make_error(
          fmt::format("{}: not a dicebench database (it holds tables but no dicebench schema)", db.path()));
    }
  }
  return static_cast<int>(*version);
}

namespace {

Result<void> migrate_in_transaction(Database& db, int target) {
  auto transaction = Transaction::begin(db, "cannot start schema migration");
  if (!transaction.ok()) return transaction.error();
  // Read again under the write lock: another process may have migrated meanwhile.
  auto current = read_schema_version(db);
  if (!current.ok()) return current.error();
  if (*current >= target) return {};
  for (int version = *current + 1; version <= target; ++version) {
    auto applied = db.exec(step_sql(version), fmt::format("cannot migrate schema to version {}", version));
    if (!applied.ok()) return applied.error();  // the transaction rolls back
  }
  // Rebuilt tables (step 7) must keep every reference whole.
  auto broken = db.query_int("SELECT count(*) FROM pragma_foreign_key_check", "cannot check foreign keys");
  if (!broken.ok()) return broken.error();
  if (*broken != 0)
    return make_error(fmt::format("{}: cannot migrate schema to version {}: {} rows would lose what they refer to",
                                  db.path(), target, *broken));
  auto stamped = db.exec(fmt::format("PRAGMA application_id = {}; PRAGMA user_version = {};", kApplicationId, target),
                         "cannot record schema version");
  if (!stamped.ok()) return stamped.error();
  return transaction->commit();
}

}  // namespace

Result<void> migrate(Database& db, int target) {
  if (target < 1 || target > kSchemaVersion) {
    return make_error(
        fmt::format("{}: no schema version {} (this build knows 1 to {})", db.path(), target, kSchemaVersion));
  }
  // Foreign keys stay off while tables are rebuilt (dropping the old table would otherwise
  // cascade into the rows that refer to it); the pragma is a no-op inside a transaction.
  auto enforced = db.query_int("PRAGMA foreign_keys", "cannot read foreign key setting");
  if (!enforced.ok()) return enforced.error();
  if (*enforced) DICEBENCH_TRY(db.exec("PRAGMA foreign_keys = OFF", "cannot start schema migration"));
  auto migrated = migrate_in_transaction(db, target);
  if (*enforced) {
    auto restored = db.exec("PRAGMA foreign_keys = ON", "cannot finish schema migration");
    if (migrated.ok() && !restored.ok()) return restored.error();
  }
  return migrated;
}

std::string_view sample_level_sql(int version) {
  return version >= 7 ? "s.level"
                      : "(SELECT p1.level FROM problems AS p1 WHERE p1.run = s.run AND p1.problem_id = s.problem_id)";
}

std::string_view sample_problem_join_sql(int version) {
  return version >= 7 ? "p.run = s.run AND p.level = s.level AND p.problem_id = s.problem_id"
                      : "p.run = s.run AND p.problem_id = s.problem_id";
}

Result<void> create_schema_version(const std::string& path, int version) {
  auto db = Database::open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  if (!db.ok()) return db.error();
  auto current = read_schema_version(*db);
  if (!current.ok()) return current.error();
  if (*current != 0)
    return make_error(fmt::format("{}: already holds a dicebench schema (version {})", path, *current));
  return migrate(*db, version);
}

}  // namespace dicebench::results
