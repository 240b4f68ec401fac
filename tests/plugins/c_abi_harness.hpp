// The host's side of the plugin C ABI, for tests that load a built plugin exactly as the host
// does (dlopen RTLD_NOW | RTLD_LOCAL, then the entry symbol) and drive it through plugin.h
// alone: a stub services table (captured logs, a config map, a cancellation flag) and sinks
// that copy what they receive.
#pragma once

#include <dicebench/plugin.h>

#include <dlfcn.h>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dicebench::test {

inline dicebench_str c_str(std::string_view s) { return dicebench_str{s.data(), s.size()}; }
inline std::string text_of(dicebench_str s) { return s.data ? std::string(s.data, s.size) : std::string(); }

// dlopen + dlsym of the entry; nullptr and *error set on failure. The library stays loaded.
inline const dicebench_plugin_descriptor* load_plugin(const char* path, std::string* error) {
  void* handle = ::dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    *error = ::dlerror();
    return nullptr;
  }
  void* entry = ::dlsym(handle, DICEBENCH_ENTRY_SYMBOL);
  if (!entry) {
    *error = std::string("no entry symbol in ") + path;
    return nullptr;
  }
  return reinterpret_cast<dicebench_entry_fn>(entry)();
}

// A host services table backed by plain members. Not copyable: the table points at it.
struct StubHost {
  std::map<std::string, std::string> config;
  std::vector<std::pair<dicebench_log_level, std::string>> logs;
  bool cancel = false;
  int cancel_polls = 0;
  dicebench_host_services services{};

  StubHost() {
    services.struct_size = sizeof(dicebench_host_services);
    services.abi_major = DICEBENCH_ABI_MAJOR;
    services.abi_minor = DICEBENCH_ABI_MINOR;
    services.host = this;
    services.log = [](void* host, dicebench_log_level level, dicebench_str message) {
      static_cast<StubHost*>(host)->logs.emplace_back(level, text_of(message));
    };
    services.config_get = [](void* host, dicebench_str key, dicebench_str* value) -> int {
      const auto& config = static_cast<StubHost*>(host)->config;
      const auto it = config.find(text_of(key));
      if (it == config.end()) return 0;
      *value = c_str(it->second);
      return 1;
    };
    services.cancelled = [](void* host) -> int {
      auto* self = static_cast<StubHost*>(host);
      ++self->cancel_polls;
      return self->cancel ? 1 : 0;
    };
  }
  StubHost(const StubHost&) = delete;
  StubHost& operator=(const StubHost&) = delete;

  bool logged(dicebench_log_level level, std::string_view part) const {
    for (const auto& [l, message] : logs)
      if (l == level && message.find(part) != std::string::npos) return true;
    return false;
  }
};

// A text sink that appends to a std::string.
inline void append_text(void* user, dicebench_str text) { static_cast<std::string*>(user)->append(text_of(text)); }

// What a result sink received for one request.
struct ReceivedResult {
  size_t request_index = 0;
  std::string completion;
  std::string stats_json;
  std::optional<std::string> candidate;  // nullopt when the plugin left it NULL
};

// Collects results; optionally asks the host to cancel once `cancel_after` results arrived.
struct ResultCollector {
  std::vector<ReceivedResult> results;
  StubHost* host = nullptr;
  size_t cancel_after = 0;  // 0: never

  static void sink(void* user, size_t request_index, const dicebench_generation_result* result) {
    auto* self = static_cast<ResultCollector*>(user);
    ReceivedResult copy;
    copy.request_index = request_index;
    copy.completion = text_of(result->completion);
    copy.stats_json = text_of(result->stats_json);
    if (result->optional_candidate.data) copy.candidate = text_of(result->optional_candidate);
    self->results.push_back(std::move(copy));
    if (self->host && self->cancel_after && self->results.size() >= self->cancel_after) self->host->cancel = true;
  }
};

// A request whose strings point into `prompt`/`name`, which must outlive it.
inline dicebench_generation_request make_request(int32_t level, int64_t problem, int32_t sample,
                                                 std::string_view prompt = "prompt",
                                                 std::string_view name = "Problem") {
  dicebench_generation_request request{};
  request.prompt = c_str(prompt);
  request.suite = c_str("kernelbench-l1");
  request.level = level;
  request.problem_id = problem;
  request.problem_name = c_str(name);
  request.sample_index = sample;
  request.seed = 42;
  return request;
}

}  // namespace dicebench::test
