// Helpers shared by the results tests: a fresh temporary folder per test, raw SQL on a
// database file, and a small run with problems and samples.
#pragma once

#include <doctest/doctest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "results/store/schema.hpp"
#include "results/store/sqlite_handle.hpp"
#include "results/store/store.hpp"

namespace dicebench::results::testing {

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "dicebench-results-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all, std::filesystem::perm_options::add, ignored);
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

// A raw connection for arranging and inspecting files behind the store's back.
inline Database raw_open(const std::string& path) {
  auto db = Database::open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  REQUIRE_MESSAGE(db.ok(), (db.ok() ? "" : db.error().message));
  return std::move(*db);
}

inline void raw_exec(Database& db, const std::string& sql) {
  auto done = db.exec(sql, "test sql");
  REQUIRE_MESSAGE(done.ok(), (done.ok() ? "" : done.error().message));
}

// A database as dicebench left it at schema version 3: one finished run of one problem with one
// correct sample (runtime 0.5 ms, speedup 2).
inline void make_version3_database(const std::string& path) {
  auto created = create_schema_version(path, 3);
  REQUIRE_MESSAGE(created.ok(), (created.ok() ? "" : created.error().message));
  Database db = raw_open(path);
  raw_exec(db,
           "INSERT INTO runs (created, status, model, suite, config, dicebench_version, git_sha, host, seed, repro) "
           "VALUES ('t','finished','m','kernelbench-l1','{}','v','g','h',1,'{}');"
           "INSERT INTO problems VALUES (1, 1, 1, 'Add', 'level1/1_Add.py', 'c', 'p');"
           "INSERT INTO samples (run, problem_id, sample_index, prompt_hash, completion, candidate, extraction, "
           "gen_stats, created) VALUES (1, 1, 0, 'p', 'x', 'class ModelNew: pass', 'ok', '{}', 't');"
           "INSERT INTO evaluations (sample, status, compiled, correct, device, runtime_ms, speedup, created) "
           "VALUES (1, 'correct', 1, 1, 'cpu', 0.5, 2.0, 't');");
}

inline std::int64_t raw_int(Database& db, const std::string& sql) {
  auto value = db.query_int(sql, "test sql");
  REQUIRE_MESSAGE(value.ok(), (value.ok() ? "" : value.error().message));
  return *value;
}

inline Store open_store(const std::string& path, OpenOptions options = {}) {
  auto store = Store::open(path, OpenMode::ReadWrite, options);
  REQUIRE_MESSAGE(store.ok(), (store.ok() ? "" : store.error().message));
  return std::move(*store);
}

inline NewRun sample_run() {
  NewRun run;
  run.model = "replay:/tmp/completions";
  run.suite = "kernelbench-l1";
  run.config_json = R"({"samples":3,"temperature":0.7})";
  run.dicebench_version = "0.1.0";
  run.git_sha = "abcdef123456";
  run.host = "testhost";
  run.gpu = "NVIDIA H200";
  run.seed = 42;
  run.repro_json = R"({"seed":42})";
  return run;
}

inline ProblemRow problem(std::int64_t id, int level, const std::string& name) {
  return ProblemRow{id,
                    level,
                    name,
                    "level" + std::to_string(level) + "/" + std::to_string(id) + "_" + name + ".py",
                    "content-" + std::to_string(id),
                    "prompt-" + std::to_string(id),
                    std::nullopt};
}

inline NewSample new_sample(std::int64_t run, std::int64_t problem_id, int index, bool with_candidate = true,
                            int level = 1) {
  NewSample sample;
  sample.run = run;
  sample.level = level;
  sample.problem_id = problem_id;
  sample.sample_index = index;
  sample.prompt_hash = "prompt-" + std::to_string(problem_id);
  sample.completion = "```python\nclass ModelNew: pass\n```";
  if (with_candidate) sample.candidate = "class ModelNew: pass\n";
  sample.gen_stats_json = R"({"tokens":12})";
  return sample;
}

template <class T>
T require_ok(Result<T> result) {
  REQUIRE_MESSAGE(result.ok(), (result.ok() ? "" : result.error().message));
  return std::move(result).value();
}

inline void require_ok(const Result<void>& result) {
  REQUIRE_MESSAGE(result.ok(), (result.ok() ? "" : result.error().message));
}

// True when the process can write to a file that has no write permission (root, capabilities).
inline bool permissions_are_bypassed(const TempDir& dir) {
  const std::string probe = dir.file("permission-probe");
  write_bytes(probe, "x");
  std::filesystem::permissions(probe, std::filesystem::perms::owner_read);
  std::ofstream out(probe, std::ios::app);
  const bool bypassed = out.good();
  out.close();
  std::filesystem::remove(probe);
  return bypassed;
}

}  // namespace dicebench::results::testing
