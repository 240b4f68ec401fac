// Progress of long work: a live line on a terminal (done/total, rate, ETA), plain periodic log
// lines otherwise, and a closing summary line.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace dicebench::host {

class Progress {
 public:
  // `unit` names what is counted ("samples"); `interactive` defaults to whether stderr is a tty.
  Progress(std::string label, size_t total, std::string unit, int interactive = -1);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void advance(size_t by = 1);
  // Removes the live line; returns "N units in T s (R/s)".
  std::string finish();

  // "12.3 s", "4 min 05 s", "1 h 02 min".
  static std::string format_duration(double seconds);

 private:
  void render(bool force);
  std::string line() const;

  std::string label_;
  size_t total_;
  std::string unit_;
  bool interactive_;
  size_t done_ = 0;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_render_;
  bool finished_ = false;
};

}  // namespace dicebench::host
