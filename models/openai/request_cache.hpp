// The openai: model's request cache: a SQLite file beside the results database
// (<db>.openai-cache.sqlite) holding each answered request's reply, keyed by a hash of the base
// URL, the model, the full request body (without "n") and the sample index. A re-run or a resume
// reads its answers here instead of asking the server again; changed settings change the body, so
// the key.
#pragma once

#include <sqlite3.h>

#include <optional>
#include <string>

namespace dicebench::openai {

struct CachedReply {
  std::string body;    // the server's reply, as it came
  double seconds = 0;  // how long it took then
  size_t choice = 0;   // which of its choices is this sample's (requests with "n")
};

class RequestCache {
 public:
  // Opens (creating) the cache file; throws std::runtime_error with one line naming it.
  explicit RequestCache(const std::string& path);
  ~RequestCache();
  RequestCache(const RequestCache&) = delete;
  RequestCache& operator=(const RequestCache&) = delete;

  // "sha256:<hex>" of the base URL, model, body and sample index (each length-prefixed).
  static std::string key(const std::string& base_url, const std::string& model, const std::string& body,
                         int sample_index);

  std::optional<CachedReply> find(const std::string& key) const;
  // Stores a good reply at once (its own transaction), so an interrupted run keeps it.
  void store(const std::string& key, const std::string& base_url, const std::string& model, int sample_index,
             const std::string& request_body, const CachedReply& reply);
  const std::string& path() const { return path_; }

 private:
  void exec(const char* sql) const;
  std::string path_;
  sqlite3* db_ = nullptr;
};

}  // namespace dicebench::openai
