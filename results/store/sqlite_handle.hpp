// Thin RAII layer over the SQLite C API: a connection, prepared statements with typed binding
// and column access, an IMMEDIATE transaction guard, and the mapping of SQLite result codes to
// one-line dicebench errors that name the database file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/base/result.hpp"

struct sqlite3;
struct sqlite3_stmt;

namespace dicebench::results {

// Turns a failed SQLite call into a one-line error naming the file. `context` says what was
// being done ("cannot create run"); well-known conditions (locked, read-only, not a database,
// corrupt, disk full) get fixed wording.
Error sqlite_error(sqlite3* db, int rc, std::string_view path, std::string_view context);

class Statement {
 public:
  Statement() = default;
  Statement(sqlite3_stmt* stmt, sqlite3* db, std::string path);
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  sqlite3_stmt* get() const { return stmt_; }

  // Binding, 1-based like SQLite. A disengaged optional binds NULL.
  void bind(int index, std::int64_t value);
  void bind(int index, int value) { bind(index, static_cast<std::int64_t>(value)); }
  void bind(int index, double value);
  void bind(int index, std::string_view value);
  void bind(int index, const std::string& value) { bind(index, std::string_view(value)); }
  void bind(int index, const char* value) { bind(index, std::string_view(value)); }
  void bind_null(int index);
  template <class T>
  void bind(int index, const std::optional<T>& value) {
    if (value) {
      bind(index, *value);
    } else {
      bind_null(index);
    }
  }
  // Binds the arguments to parameters 1..N.
  template <class... Args>
  void bind_all(const Args&... args) {
    int index = 0;
    (bind(++index, args), ...);
  }

  // Steps once: true when a row is available, false when the statement is done.
  Result<bool> step(std::string_view context);
  // Steps a statement that returns no rows to completion.
  Result<void> run(std::string_view context);
  void reset();

  int column_count() const;
  bool is_null(int column) const;
  std::int64_t column_int64(int column) const;
  double column_double(int column) const;
  std::string column_text(int column) const;
  std::optional<std::string> column_optional_text(int column) const;
  std::optional<double> column_optional_double(int column) const;
  std::optional<std::int64_t> column_optional_int64(int column) const;

 private:
  sqlite3_stmt* stmt_ = nullptr;
  sqlite3* db_ = nullptr;
  std::string path_;
};

class Database {
 public:
  Database() = default;
  Database(Database&& other) noexcept;
  Database& operator=(Database&& other) noexcept;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  ~Database();

  // Opens with sqlite3_open_v2 flags (SQLITE_OPEN_*); extended result codes are switched on.
  static Result<Database> open(const std::string& path, int flags);
  // Opens an existing file for reading only. A WAL database whose folder this process cannot
  // write (so SQLite cannot make the -shm file) is opened as immutable when no -wal file holds
  // uncheckpointed changes, so that read-only users can still read it.
  static Result<Database> open_read_only(const std::string& path);

  sqlite3* get() const { return db_; }
  const std::string& path() const { return path_; }

  // Runs one or more statements that return no rows we need.
  Result<void> exec(std::string_view sql, std::string_view context);
  Result<Statement> prepare(std::string_view sql, std::string_view context);
  // The single integer a statement such as "PRAGMA user_version" returns.
  Result<std::int64_t> query_int(std::string_view sql, std::string_view context);

  void set_busy_timeout(int milliseconds);
  Error error(int rc, std::string_view context) const { return sqlite_error(db_, rc, path_, context); }

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
};

// BEGIN IMMEDIATE on creation; rolls back on destruction unless committed.
class Transaction {
 public:
  static Result<Transaction> begin(Database& db, std::string_view context);
  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();

  Result<void> commit();

 private:
  Transaction(Database* db, std::string context) : db_(db), context_(std::move(context)) {}
  Database* db_ = nullptr;
  std::string context_;
};

}  // namespace dicebench::results
