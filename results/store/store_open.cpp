// Opening a results database: file checks, connection settings (foreign keys, WAL, busy
// timeout, synchronous), schema version checks and migration. Nothing is written before the
// checks pass, so a refused file is left exactly as it was.
#include <sqlite3.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "results/store/schema.hpp"
#include "results/store/store.hpp"

namespace dicebench::results {
namespace fs = std::filesystem;
namespace {

// Closes `db` and, when this call created the file, removes it again.
Result<Store> open_failed_new_file(Error error, Database& db, const fs::path& path, bool created) {
  db = Database();
  if (created) {
    // The file did not exist before this call: take away what we made rather than leave an
    // empty or half-initialised database behind.
    std::error_code ignored;
    fs::remove(path, ignored);
    fs::remove(fs::path(path.string() + "-wal"), ignored);
    fs::remove(fs::path(path.string() + "-shm"), ignored);
    fs::remove(fs::path(path.string() + "-journal"), ignored);
  }
  return error;
}

}  // namespace

Result<Store> Store::open(const fs::path& path, OpenMode mode, OpenOptions options) {
  const std::string name = path.string();
  if (name.empty()) return make_error("no database file given");
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  const bool exists = fs::exists(status);
  if (exists && fs::is_directory(status)) return make_error(fmt::format("{} is a folder, not a database file", name));

  if (mode == OpenMode::ReadOnly) {
    if (!exists) return make_error(fmt::format("no database at {}", name));
    auto db = Database::open_read_only(name);
    if (!db.ok()) return db.error();
    db->set_busy_timeout(options.busy_timeout_ms);
    auto version = read_schema_version(*db);
    if (!version.ok()) return version.error();
    if (*version == 0) return make_error(fmt::format("{}: holds no dicebench results (empty database)", name));
    auto settings = db->exec("PRAGMA query_only = ON", "cannot configure connection");
    if (!settings.ok()) return settings.error();
    return Store(std::move(*db), mode, *version);
  }

  // ReadWrite: check what we can before SQLite touches anything.
  const fs::path parent = path.parent_path();
  if (!parent.empty() && !fs::exists(parent, ec)) {
    fs::create_directories(parent, ec);
    if (ec) return make_error(fmt::format("{}: cannot create folder {}: {}", name, parent.string(), ec.message()));
  }
  if (exists && ::access(name.c_str(), W_OK) != 0) {
    return make_error(
        fmt::format("{}: database is read-only (the file is not writable: {})", name, std::strerror(errno)));
  }
  const std::string folder = parent.empty() ? std::string(".") : parent.string();
  if (::access(folder.c_str(), W_OK) != 0) {
    return make_error(fmt::format("{}: database is read-only (its folder {} is not writable: {})", name, folder,
                                  std::strerror(errno)));
  }
  const bool created = !exists;

  auto db = Database::open(name, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  if (!db.ok()) {
    Database none;
    return open_failed_new_file(db.error(), none, path, created);
  }
  if (sqlite3_db_readonly(db->get(), "main") == 1) {
    return make_error(fmt::format("{}: database is read-only (SQLite could only open it for reading)", name));
  }
  db->set_busy_timeout(options.busy_timeout_ms);

  auto version = read_schema_version(*db);
  if (!version.ok()) return open_failed_new_file(version.error(), *db, path, created);

  // WAL where the file system allows it; otherwise stay quietly in the rollback journal.
  {
    auto wal = db->prepare("PRAGMA journal_mode = WAL", "cannot set journal mode");
    if (!wal.ok()) return open_failed_new_file(wal.error(), *db, path, created);
    const int rc = sqlite3_step(wal->get());
    const int primary = rc & 0xff;
    if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED || primary == SQLITE_READONLY) {
      return open_failed_new_file(db->error(rc, "cannot set journal mode"), *db, path, created);
    }
  }
  auto settings = db->exec("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;", "cannot configure connection");
  if (!settings.ok()) return open_failed_new_file(settings.error(), *db, path, created);

  if (*version < kSchemaVersion) {
    auto migrated = migrate(*db);
    if (!migrated.ok()) return open_failed_new_file(migrated.error(), *db, path, created);
  }
  return Store(std::move(*db), mode, kSchemaVersion);
}

}  // namespace dicebench::results
