// Running one read-only SQL statement against a results database for `dicebench query`.
// Layers of protection: the file is opened with SQLITE_OPEN_READONLY, the connection has
// query_only on, an authorizer refuses ATTACH/DETACH and pragmas that set something, and the
// prepared statement must be one that SQLite reports as read-only.
#include "results/store/query.hpp"

#include <sqlite3.h>

#include <fmt/format.h>

#include <array>
#include <string_view>

#include "results/store/sqlite_handle.hpp"

namespace dicebench::results {
namespace {

constexpr std::string_view kNotReadOnly = "query must be read-only (dicebench query never changes the database)";

struct Guard {
  bool refused = false;
};

// Pragmas that take an argument yet only read.
bool is_reading_pragma(std::string_view name) {
  static constexpr std::array<std::string_view, 10> kReading = {
      "table_info", "table_xinfo",      "table_list",        "index_info",      "index_xinfo",
      "index_list", "foreign_key_list", "foreign_key_check", "integrity_check", "quick_check"};
  for (std::string_view reading : kReading) {
    if (reading == name) return true;
  }
  return false;
}

int authorize(void* user, int action, const char* arg1, const char* arg2, const char*, const char*) {
  auto* guard = static_cast<Guard*>(user);
  switch (action) {
    case SQLITE_ATTACH:
    case SQLITE_DETACH:
      guard->refused = true;
      return SQLITE_DENY;
    case SQLITE_PRAGMA:
      if (arg2 != nullptr && (arg1 == nullptr || !is_reading_pragma(arg1))) {
        guard->refused = true;
        return SQLITE_DENY;
      }
      return SQLITE_OK;
    default:
      return SQLITE_OK;
  }
}

Cell read_cell(sqlite3_stmt* stmt, int column) {
  switch (sqlite3_column_type(stmt, column)) {
    case SQLITE_INTEGER:
      return static_cast<std::int64_t>(sqlite3_column_int64(stmt, column));
    case SQLITE_FLOAT:
      return sqlite3_column_double(stmt, column);
    case SQLITE_TEXT: {
      const auto* text = sqlite3_column_text(stmt, column);
      return std::string(reinterpret_cast<const char*>(text), static_cast<size_t>(sqlite3_column_bytes(stmt, column)));
    }
    case SQLITE_BLOB: {
      const auto* data = static_cast<const std::uint8_t*>(sqlite3_column_blob(stmt, column));
      Blob blob;
      if (data != nullptr) blob.bytes.assign(data, data + sqlite3_column_bytes(stmt, column));
      return blob;
    }
    default:
      return std::monostate{};
  }
}

}  // namespace

Result<QueryResult> run_query(const std::filesystem::path& database, std::string_view sql, QueryOptions options) {
  const std::string name = database.string();
  std::error_code ec;
  if (name.empty() || !std::filesystem::exists(database, ec)) return make_error(fmt::format("no database at {}", name));
  if (std::filesystem::is_directory(database, ec)) {
    return make_error(fmt::format("{} is a folder, not a database file", name));
  }

  auto db = Database::open_read_only(name);
  if (!db.ok()) return db.error();
  db->set_busy_timeout(options.busy_timeout_ms);
  DICEBENCH_TRY(db->exec("PRAGMA query_only = ON", "cannot configure connection"));
  Guard guard;
  sqlite3_set_authorizer(db->get(), authorize, &guard);

  constexpr std::string_view context = "query failed";
  sqlite3_stmt* raw = nullptr;
  const char* tail = nullptr;
  int rc = sqlite3_prepare_v2(db->get(), sql.data(), static_cast<int>(sql.size()), &raw, &tail);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(raw);
    if (guard.refused) return make_error(std::string(kNotReadOnly));
    return db->error(rc, context);
  }
  if (raw == nullptr) return make_error("query is empty");
  Statement stmt(raw, db->get(), name);

  // Whatever follows the first statement may only be whitespace, comments or semicolons.
  const char* end = sql.data() + sql.size();
  while (tail != nullptr && tail < end) {
    sqlite3_stmt* next = nullptr;
    const char* next_tail = nullptr;
    rc = sqlite3_prepare_v2(db->get(), tail, static_cast<int>(end - tail), &next, &next_tail);
    sqlite3_finalize(next);
    if (rc != SQLITE_OK || next != nullptr) return make_error("query must be a single statement");
    if (next_tail == tail) break;
    tail = next_tail;
  }

  if (sqlite3_stmt_readonly(raw) == 0) return make_error(std::string(kNotReadOnly));

  QueryResult result;
  const int columns = sqlite3_column_count(raw);
  for (int c = 0; c < columns; ++c) {
    const char* column_name = sqlite3_column_name(raw, c);
    result.columns.emplace_back(column_name != nullptr ? column_name : "");
  }
  for (;;) {
    auto row = stmt.step(context);
    if (!row.ok()) {
      if (guard.refused) return make_error(std::string(kNotReadOnly));
      return row.error();
    }
    if (!*row) break;
    std::vector<Cell> cells;
    cells.reserve(static_cast<size_t>(columns));
    for (int c = 0; c < columns; ++c) cells.push_back(read_cell(raw, c));
    result.rows.push_back(std::move(cells));
  }
  return result;
}

}  // namespace dicebench::results
