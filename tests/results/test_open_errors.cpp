// Opening bad files: newer schema, not a database, another program's database, missing file,
// read-only file or folder, locked database. Each is a one-line error naming the file, and
// the file is left as it was.
#include <doctest/doctest.h>

#include <chrono>

#include "results/store/query.hpp"
#include "results/store/schema.hpp"
#include "test_support.hpp"

using namespace dicebench;
using namespace dicebench::results;
using namespace dicebench::results::testing;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("a database written by a newer dicebench is refused and left untouched") {
  TempDir dir;
  const std::string path = dir.file("results.db");
  {
    Store store = open_store(path);
    require_ok(store.create_run(sample_run()));
  }
  {
    Database db = raw_open(path);
    raw_exec(db, "PRAGMA user_version = 99");
  }
  const std::string before = read_bytes(path);
  for (OpenMode mode : {OpenMode::ReadWrite, OpenMode::ReadOnly}) {
    auto store = Store::open(path, mode);
    REQUIRE_FALSE(store.ok());
    const std::string& message = store.error().message;
    CHECK(message == path + " was written by a newer dicebench (schema version 99, this build knows up to " +
                         std::to_string(kSchemaVersion) + ")");
    CHECK(message.find('\n') == std::string::npos);
  }
  CHECK_MESSAGE(read_bytes(path) == before, "the file changed");
  Database db = raw_open(path);
  CHECK(raw_int(db, "PRAGMA user_version") == 99);
  CHECK(raw_int(db, "SELECT count(*) FROM runs") == 1);
}

TEST_CASE("a file that is not a SQLite database is refused and left untouched") {
  TempDir dir;
  const std::string path = dir.file("notes.db");
  std::string text;
  for (int i = 0; i < 200; ++i) text += "this is a text file, not a database\n";
  write_bytes(path, text);
  for (OpenMode mode : {OpenMode::ReadWrite, OpenMode::ReadOnly}) {
    auto store = Store::open(path, mode);
    REQUIRE_FALSE(store.ok());
    CHECK(store.error().message == path + ": not a SQLite database");
  }
  auto query = run_query(path, "SELECT 1 FROM runs");
  REQUIRE_FALSE(query.ok());
  CHECK(query.error().message == path + ": not a SQLite database");
  CHECK_MESSAGE(read_bytes(path) == text, "the file changed");
  CHECK_FALSE(std::filesystem::exists(path + "-wal"));
  CHECK_FALSE(std::filesystem::exists(path + "-journal"));
}

TEST_CASE("another program's SQLite database is refused") {
  TempDir dir;
  SUBCASE("tables but no dicebench schema") {
    const std::string path = dir.file("other.db");
    {
      Database db = raw_open(path);
      raw_exec(db, "CREATE TABLE runs (x INTEGER)");
    }
    auto store = Store::open(path);
    REQUIRE_FALSE(store.ok());
    CHECK(store.error().message == path + ": not a dicebench database (it holds tables but no dicebench schema)");
  }
  SUBCASE("another application id") {
    const std::string path = dir.file("other.db");
    {
      Database db = raw_open(path);
      raw_exec(db, "PRAGMA application_id = 1234; PRAGMA user_version = 1");
    }
    auto store = Store::open(path);
    REQUIRE_FALSE(store.ok());
    CHECK(contains(store.error().message, "not a dicebench database (application id 0x4d2"));
  }
}

TEST_CASE("read-only opening never creates a file") {
  TempDir dir;
  const std::string path = dir.file("missing/results.db");
  auto store = Store::open(path, OpenMode::ReadOnly);
  REQUIRE_FALSE(store.ok());
  CHECK(store.error().message == "no database at " + path);
  auto query = run_query(path, "SELECT 1");
  REQUIRE_FALSE(query.ok());
  CHECK(query.error().message == "no database at " + path);
  CHECK_FALSE(std::filesystem::exists(dir.path() / "missing"));

  // An empty file is no dicebench database either.
  const std::string empty = dir.file("empty.db");
  write_bytes(empty, "");
  auto empty_store = Store::open(empty, OpenMode::ReadOnly);
  REQUIRE_FALSE(empty_store.ok());
  CHECK(empty_store.error().message == empty + ": holds no dicebench results (empty database)");
  CHECK(read_bytes(empty).empty());
}

TEST_CASE("a store opened read-only refuses writes and writes nothing") {
  TempDir dir;
  const std::string path = dir.file("results.db");
  { Store store = open_store(path); }
  const std::string before = read_bytes(path);
  auto store = Store::open(path, OpenMode::ReadOnly);
  REQUIRE(store.ok());
  auto run = store->create_run(sample_run());
  REQUIRE_FALSE(run.ok());
  CHECK(run.error().message == path + ": database is read-only (cannot create run)");
  CHECK(require_ok(store->runs()).empty());
  CHECK_MESSAGE(read_bytes(path) == before, "the file changed");
}

TEST_CASE("a read-only database file or folder is refused for writing") {
  TempDir dir;
  if (permissions_are_bypassed(dir)) {
    MESSAGE(
        "skipped: this process writes to files without write permission (root?), so chmod cannot make a "
        "read-only database here");
    return;
  }
  namespace fs = std::filesystem;
  SUBCASE("file") {
    const std::string path = dir.file("results.db");
    { Store store = open_store(path); }
    const std::string before = read_bytes(path);
    fs::permissions(path, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
    auto store = Store::open(path);
    REQUIRE_FALSE(store.ok());
    CHECK(contains(store.error().message, path + ": database is read-only (the file is not writable"));
    CHECK_MESSAGE(read_bytes(path) == before, "the file changed");
    // Reading still works.
    CHECK(Store::open(path, OpenMode::ReadOnly).ok());
  }
  SUBCASE("folder") {
    const fs::path folder = dir.path() / "locked-folder";
    fs::create_directories(folder);
    const std::string path = (folder / "results.db").string();
    fs::permissions(folder, fs::perms::owner_read | fs::perms::owner_exec);
    auto store = Store::open(path);
    REQUIRE_FALSE(store.ok());
    CHECK(contains(store.error().message, "database is read-only (its folder"));
    CHECK_FALSE(fs::exists(path));
    fs::permissions(folder, fs::perms::owner_all);
  }
  SUBCASE("a WAL database in a read-only folder can still be read") {
    const fs::path folder = dir.path() / "shared";
    fs::create_directories(folder);
    const std::string path = (folder / "results.db").string();
    {
      Store store = open_store(path);
      require_ok(store.create_run(sample_run()));
    }
    REQUIRE_FALSE(fs::exists(path + "-shm"));
    fs::permissions(path, fs::perms::owner_read);
    fs::permissions(folder, fs::perms::owner_read | fs::perms::owner_exec);
    auto store = Store::open(path, OpenMode::ReadOnly);
    REQUIRE_MESSAGE(store.ok(), (store.ok() ? "" : store.error().message));
    CHECK(require_ok(store->runs()).size() == 1);
    auto query = run_query(path, "SELECT count(*) FROM runs");
    REQUIRE_MESSAGE(query.ok(), (query.ok() ? "" : query.error().message));
    CHECK(std::get<std::int64_t>(query->rows[0][0]) == 1);
    CHECK_FALSE(fs::exists(path + "-shm"));
    fs::permissions(folder, fs::perms::owner_all);
  }
}

TEST_CASE("a database locked by another process gives a clear error after the busy timeout") {
  TempDir dir;
  using Clock = std::chrono::steady_clock;
  const OpenOptions quick{.busy_timeout_ms = 100};

  SUBCASE("a WAL database with another writer: the first write fails") {
    const std::string path = dir.file("results.db");
    Store store = open_store(path, quick);
    Database other = raw_open(path);
    raw_exec(other, "BEGIN EXCLUSIVE");
    const auto start = Clock::now();
    auto run = store.create_run(sample_run());
    const auto waited = Clock::now() - start;
    REQUIRE_FALSE(run.ok());
    CHECK(run.error().message == path + ": database is locked by another process (cannot create run)");
    CHECK(waited >= std::chrono::milliseconds(80));
    CHECK(waited < std::chrono::milliseconds(1500));
    raw_exec(other, "ROLLBACK");
    CHECK(require_ok(store.create_run(sample_run())) == 1);  // nothing half-written before
  }

  SUBCASE("a rollback-journal database held exclusively: opening fails") {
    const std::string path = dir.file("results.db");
    require_ok(create_schema_version(path, 1));
    Database other = raw_open(path);
    raw_exec(other,
             "BEGIN EXCLUSIVE; INSERT INTO runs (created, status, model, suite, config, dicebench_version, "
             "git_sha, host, seed, repro) VALUES ('t','running','m','s','{}','v','g','h',1,'{}');");
    const auto start = Clock::now();
    auto store = Store::open(path, OpenMode::ReadWrite, quick);
    const auto waited = Clock::now() - start;
    REQUIRE_FALSE(store.ok());
    CHECK(contains(store.error().message, path + ": database is locked by another process"));
    CHECK(waited < std::chrono::milliseconds(1500));
    raw_exec(other, "ROLLBACK");
    CHECK(raw_int(other, "PRAGMA user_version") == 1);
    auto reopened = Store::open(path, OpenMode::ReadWrite, quick);
    REQUIRE(reopened.ok());
    CHECK(reopened->schema_version() == kSchemaVersion);
  }
}
