// What a dicebench-sandbox launch managed to set up: one entry per protection (protections.hpp),
// active with a detail ("cgroup v2, 8192 MiB") or missing with the reason. The stages of the
// launch (supervisor, namespace init, worker) run in different processes and send their entries
// to the supervisor as lines over a pipe; the supervisor logs them and, with --probe, prints them
// as one JSON object for the host.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace dicebench::sandbox {

struct ProtectionState {
  bool active = false;
  std::string detail;  // how (active) or why not (missing)
};

class Report {
 public:
  void set(std::string_view protection, bool active, std::string detail);
  const std::map<std::string, ProtectionState>& entries() const { return entries_; }
  // Parses lines written by line_for(); unknown protection names are kept (the host checks them).
  void add_lines(std::string_view text);
  // The protections of kProtections that are not active, comma-separated ("" when all are).
  std::string missing() const;
  std::string summary() const;  // "active: a, b; missing: c (why)"
  std::string json() const;     // {"protections": {"name": {"active": b, "detail": s}, ...}}

  static std::string line_for(std::string_view protection, bool active, std::string_view detail);

 private:
  std::map<std::string, ProtectionState> entries_;
};

}  // namespace dicebench::sandbox
