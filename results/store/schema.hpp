// The results database schema: an ordered list of migration steps keyed by PRAGMA user_version,
// applied in one transaction, plus the checks that a file is a dicebench database this build
// can read (not another program's file, not written by a newer dicebench).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "core/base/result.hpp"
#include "core/spec/evaluation_store.hpp"
#include "results/store/sqlite_handle.hpp"

namespace dicebench::results {

// The newest schema version this build knows: that of the newest migration step written here
// (results/store/schema.cpp), or of the newest evaluations column (core/spec/evaluation.toml), whichever
// is later (a column added to the spec with the next version needs no step of its own).
inline constexpr int kStepsVersion = 9;
inline constexpr int kSchemaVersion = std::max(kStepsVersion, kEvaluationColumnsVersion);
// PRAGMA application_id of dicebench databases ("DICE").
inline constexpr std::int64_t kApplicationId = 0x44494345;

// Reads the schema version of an open database: 0 for an empty one. Errors when the file is
// not a SQLite database, belongs to another program, or was written by a newer dicebench.
Result<int> read_schema_version(Database& db);

// Brings the database to `target` (1..kSchemaVersion) inside one IMMEDIATE transaction; on any
// failure nothing changes. A database already at `target` is left alone.
Result<void> migrate(Database& db, int target = kSchemaVersion);

// SQL, on any schema version, for the level of a sample `s` (samples have their own level since
// version 7) and for the condition joining samples `s` with their problems `p`.
std::string_view sample_level_sql(int version);
std::string_view sample_problem_join_sql(int version);

// For tests and tools: creates a new database at `path` with the schema at `version`
// (1..kSchemaVersion), as an older dicebench would have left it.
Result<void> create_schema_version(const std::string& path, int version);

}  // namespace dicebench::results
