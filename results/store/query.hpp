// Read-only SQL for `dicebench query`: opens the database read-only, runs exactly one statement
// that cannot change anything, and returns its columns and rows as typed cells.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/base/result.hpp"

namespace dicebench::results {

struct Blob {
  std::vector<std::uint8_t> bytes;
};

// NULL, INTEGER, REAL, TEXT or BLOB, as SQLite returned it.
using Cell = std::variant<std::monostate, std::int64_t, double, std::string, Blob>;

struct QueryResult {
  std::vector<std::string> columns;
  std::vector<std::vector<Cell>> rows;
};

struct QueryOptions {
  int busy_timeout_ms = 2000;
};

// Errors: "no database at X" for a missing file (never creates one), "query must be a single
// statement", "query must be read-only (dicebench query never changes the database)", and
// SQLite's own message for a bad query, each naming the file.
Result<QueryResult> run_query(const std::filesystem::path& database, std::string_view sql, QueryOptions options = {});

}  // namespace dicebench::results
