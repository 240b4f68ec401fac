// The openai: model's request cache in its own SQLite file.
#include "models/openai/request_cache.hpp"

#include "core/base/sha256.hpp"

#include <stdexcept>

namespace dicebench::openai {
namespace {

constexpr int kCacheVersion = 1;

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS answers (
  key TEXT PRIMARY KEY,           -- RequestCache::key
  base_url TEXT NOT NULL,
  model TEXT NOT NULL,
  sample_index INTEGER NOT NULL,
  request TEXT NOT NULL,          -- the request body (the API key is a header, never stored)
  reply TEXT NOT NULL,            -- the server's reply body
  choice INTEGER NOT NULL,        -- which of the reply's choices answers this sample
  seconds REAL NOT NULL,
  created TEXT NOT NULL
) STRICT;
)sql";

struct Statement {
  Statement(sqlite3* db, const char* sql) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr) != SQLITE_OK) throw std::runtime_error(sqlite3_errmsg(db));
  }
  ~Statement() { sqlite3_finalize(stmt); }
  void text(int i, const std::string& s) {
    sqlite3_bind_text(stmt, i, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
  }
  sqlite3_stmt* stmt = nullptr;
};

}  // namespace

RequestCache::RequestCache(const std::string& path) : path_(path) {
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
    const std::string why = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw std::runtime_error("openai: cannot open the request cache " + path + " (" + why +
                             "); --set openai.cache=off runs without it");
  }
  sqlite3_busy_timeout(db_, 10000);
  try {
    exec("PRAGMA journal_mode=WAL");
    Statement version(db_, "PRAGMA user_version");
    const int found = sqlite3_step(version.stmt) == SQLITE_ROW ? sqlite3_column_int(version.stmt, 0) : 0;
    if (found > kCacheVersion)
      throw std::runtime_error("it was written by a newer dicebench (cache version " + std::to_string(found) + ")");
    exec(kSchema);
    exec(("PRAGMA user_version=" + std::to_string(kCacheVersion)).c_str());
  } catch (const std::exception& e) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw std::runtime_error("openai: the request cache " + path + " cannot be used: " + e.what());
  }
}

RequestCache::~RequestCache() { sqlite3_close(db_); }

void RequestCache::exec(const char* sql) const {
  char* error = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &error) != SQLITE_OK) {
    const std::string why = error ? error : "unknown error";
    sqlite3_free(error);
    throw std::runtime_error(why);
  }
}

std::string RequestCache::key(const std::string& base_url, const std::string& model, const std::string& body,
                              int sample_index) {
  std::string material;
  for (const std::string* part : {&base_url, &model, &body})
    material += std::to_string(part->size()) + ":" + *part + "\n";
  material += "sample:" + std::to_string(sample_index);
  return "sha256:" + sha256_hex(material);
}

std::optional<CachedReply> RequestCache::find(const std::string& key) const {
  Statement find(db_, "SELECT reply, seconds, choice FROM answers WHERE key = ?");
  find.text(1, key);
  if (sqlite3_step(find.stmt) != SQLITE_ROW) return std::nullopt;
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(find.stmt, 0));
  return CachedReply{std::string(text ? text : "", static_cast<size_t>(sqlite3_column_bytes(find.stmt, 0))),
                     sqlite3_column_double(find.stmt, 1), static_cast<size_t>(sqlite3_column_int64(find.stmt, 2))};
}

void RequestCache::store(const std::string& key, const std::string& base_url, const std::string& model,
                         int sample_index, const std::string& request_body, const CachedReply& reply) {
  Statement insert(
      db_,
      "INSERT OR REPLACE INTO answers (key, base_url, model, sample_index, request, reply, choice, seconds, created) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, strftime('%Y-%m-%dT%H:%M:%fZ','now'))");
  insert.text(1, key);
  insert.text(2, base_url);
  insert.text(3, model);
  sqlite3_bind_int(insert.stmt, 4, sample_index);
  insert.text(5, request_body);
  insert.text(6, reply.body);
  sqlite3_bind_int64(insert.stmt, 7, static_cast<sqlite3_int64>(reply.choice));
  sqlite3_bind_double(insert.stmt, 8, reply.seconds);
  if (sqlite3_step(insert.stmt) != SQLITE_DONE)
    throw std::runtime_error("openai: cannot write the request cache " + path_ + ": " + sqlite3_errmsg(db_));
}

}  // namespace dicebench::openai
