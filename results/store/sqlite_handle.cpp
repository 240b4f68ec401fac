// RAII wrappers over the SQLite C API and the mapping of result codes to dicebench errors.
#include "results/store/sqlite_handle.hpp"

#include <sqlite3.h>

#include <fmt/format.h>

#include <cctype>

#include <cstring>
#include <filesystem>
#include <utility>

namespace dicebench::results {

Error sqlite_error(sqlite3* db, int rc, std::string_view path, std::string_view context) {
  const int primary = rc & 0xff;
  switch (primary) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return make_error(ErrorKind::io, fmt::format("{}: database is locked by another process ({})", path, context));
    case SQLITE_READONLY:
      return make_error(ErrorKind::io, fmt::format("{}: database is read-only ({})", path, context));
    case SQLITE_NOTADB:
      return make_error(ErrorKind::io, fmt::format("{}: not a SQLite database", path));
    case SQLITE_CORRUPT:
      return make_error(ErrorKind::io, fmt::format("{}: database file is corrupt ({})", path, context));
    case SQLITE_FULL:
      return make_error(ErrorKind::io, fmt::format("{}: disk full ({})", path, context));
    case SQLITE_CANTOPEN:
      return make_error(ErrorKind::io, fmt::format("{}: cannot open database file ({})", path, context));
    default:
      break;
  }
  const char* message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  return make_error(ErrorKind::io, fmt::format("{}: {}: {}", path, context, message));
}

// ---- Statement ----

Statement::Statement(sqlite3_stmt* stmt, sqlite3* db, std::string path)
    : stmt_(stmt), db_(db), path_(std::move(path)) {}

Statement::Statement(Statement&& other) noexcept
    : stmt_(std::exchange(other.stmt_, nullptr)), db_(other.db_), path_(std::move(other.path_)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    stmt_ = std::exchange(other.stmt_, nullptr);
    db_ = other.db_;
    path_ = std::move(other.path_);
  }
  return *this;
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

void Statement::bind(int index, std::int64_t value) { sqlite3_bind_int64(stmt_, index, value); }
void Statement::bind(int index, double value) { sqlite3_bind_double(stmt_, index, value); }
void Statement::bind(int index, std::string_view value) {
  sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
}
void Statement::bind_null(int index) { sqlite3_bind_null(stmt_, index); }

Result<bool> Statement::step(std::string_view context) {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  Error error = sqlite_error(db_, rc, path_, context);
  sqlite3_reset(stmt_);
  return error;
}

Result<void> Statement::run(std::string_view context) {
  for (;;) {
    auto row = step(context);
    if (!row.ok()) return row.error();
    if (!*row) return {};
  }
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int Statement::column_count() const { return sqlite3_column_count(stmt_); }
bool Statement::is_null(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
std::int64_t Statement::column_int64(int column) const { return sqlite3_column_int64(stmt_, column); }
double Statement::column_double(int column) const { return sqlite3_column_double(stmt_, column); }

std::string Statement::column_text(int column) const {
  const auto* text = sqlite3_column_text(stmt_, column);
  if (text == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(text), static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}

std::optional<std::string> Statement::column_optional_text(int column) const {
  if (is_null(column)) return std::nullopt;
  return column_text(column);
}

std::optional<double> Statement::column_optional_double(int column) const {
  if (is_null(column)) return std::nullopt;
  return column_double(column);
}

std::optional<std::int64_t> Statement::column_optional_int64(int column) const {
  if (is_null(column)) return std::nullopt;
  return column_int64(column);
}

// ---- Database ----

Database::Database(Database&& other) noexcept : db_(std::exchange(other.db_, nullptr)), path_(std::move(other.path_)) {}

Database& Database::operator=(Database&& other) noexcept {
  if (this != &other) {
    sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

Database::~Database() { sqlite3_close_v2(db_); }

namespace {

// "file:" URI of a path, with everything but unreserved characters and '/' percent-encoded.
std::string file_uri(const std::string& path) {
  std::string uri = "file:";
  for (unsigned char c : path) {
    if (std::isalnum(c) != 0 || c == '/' || c == '-' || c == '_' || c == '.' || c == '~') {
      uri += static_cast<char>(c);
    } else {
      uri += fmt::format("%{:02X}", c);
    }
  }
  return uri;
}

bool is_read_only_setup_failure(int rc) {
  const int primary = rc & 0xff;
  return primary == SQLITE_READONLY || primary == SQLITE_CANTOPEN;
}

}  // namespace

Result<Database> Database::open_read_only(const std::string& path) {
  auto db = open(path, SQLITE_OPEN_READONLY);
  if (!db.ok()) return db;
  // The first read is where a WAL database without a usable -shm file fails.
  sqlite3_stmt* probe = nullptr;
  int rc = sqlite3_prepare_v2(db->get(), "SELECT count(*) FROM sqlite_schema", -1, &probe, nullptr);
  if (rc == SQLITE_OK) rc = sqlite3_step(probe);
  sqlite3_finalize(probe);
  if (rc == SQLITE_ROW || !is_read_only_setup_failure(rc)) return db;  // other errors show on use
  std::error_code ec;
  if (std::filesystem::exists(path + "-wal", ec)) return db->error(rc, "cannot read");
  auto immutable = open(file_uri(path) + "?immutable=1", SQLITE_OPEN_READONLY | SQLITE_OPEN_URI);
  if (!immutable.ok()) return immutable;
  immutable->path_ = path;
  return immutable;
}

Result<Database> Database::open(const std::string& path, int flags) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  Database db;
  db.db_ = raw;
  db.path_ = path;
  if (rc != SQLITE_OK) {
    if (raw == nullptr) return sqlite_error(nullptr, rc, path, "cannot open");
    // SQLite's "unable to open database file" does not say why; the system does (permissions, say).
    const int system_errno = sqlite3_system_errno(raw);
    return db.error(rc, system_errno != 0 ? "cannot open: " + std::string(std::strerror(system_errno))
                                          : std::string("cannot open"));
  }
  sqlite3_extended_result_codes(raw, 1);
  return db;
}

Result<void> Database::exec(std::string_view sql, std::string_view context) {
  const std::string text(sql);
  const int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return error(rc, context);
  return {};
}

Result<Statement> Database::prepare(std::string_view sql, std::string_view context) {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return error(rc, context);
  }
  return Statement(stmt, db_, path_);
}

Result<std::int64_t> Database::query_int(std::string_view sql, std::string_view context) {
  auto stmt = prepare(sql, context);
  if (!stmt.ok()) return stmt.error();
  auto row = stmt->step(context);
  if (!row.ok()) return row.error();
  if (!*row) return make_error(fmt::format("{}: {}: no result", path_, context));
  return stmt->column_int64(0);
}

void Database::set_busy_timeout(int milliseconds) { sqlite3_busy_timeout(db_, milliseconds); }

// ---- Transaction ----

Result<Transaction> Transaction::begin(Database& db, std::string_view context) {
  auto begun = db.exec("BEGIN IMMEDIATE", context);
  if (!begun.ok()) return begun.error();
  return Transaction(&db, std::string(context));
}

Transaction::Transaction(Transaction&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), context_(std::move(other.context_)) {}

Transaction::~Transaction() {
  if (db_ != nullptr && sqlite3_get_autocommit(db_->get()) == 0) {
    sqlite3_exec(db_->get(), "ROLLBACK", nullptr, nullptr, nullptr);
  }
}

Result<void> Transaction::commit() {
  Database* db = std::exchange(db_, nullptr);
  if (db == nullptr) return make_error("transaction already finished");
  const int rc = sqlite3_exec(db->get(), "COMMIT", nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) {
    Error error = db->error(rc, context_);
    if (sqlite3_get_autocommit(db->get()) == 0) sqlite3_exec(db->get(), "ROLLBACK", nullptr, nullptr, nullptr);
    return error;
  }
  return {};
}

}  // namespace dicebench::results
