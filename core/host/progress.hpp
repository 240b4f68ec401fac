// Progress of long work: a live line on a terminal (done/total, rate, ETA), plain periodic log
// lines otherwise, and a closing summary line.
#pragma once

#include <atomic>
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
  // From now on the rate and the ETA are those up to the last settle() (none before the first),
  // while the count moves with every advance(): for work whose items may arrive a batch at once,
  // where the first item of a batch would otherwise set the pace (an ETA of hours).
  void rate_by_batches() { by_batches_ = true; }
  // A batch ended: its pace becomes the rate's, and the live line shows it now.
  void settle();
  // Removes the live line; returns "N units in T s (R/s)".
  std::string finish();

  // "12.3 s", "4 min 05 s", "1 h 02 min".
  static std::string format_duration(double seconds);
  // The line as it shows now: "label: done/total unit (P%), R unit/s, ETA T".
  std::string line() const;
  // Without a terminal: writes the line where the count moved since it was last written (called
  // after another log line, under the log's lock).
  void log_if_moved();

 private:
  void render(bool force);

  std::string label_;
  size_t total_;
  std::string unit_;
  bool interactive_;
  std::atomic<size_t> done_ = 0;  // advanced on one thread, read where another logs
  size_t logged_done_ = 0;        // without a terminal: done_ when the line was last written
  bool by_batches_ = false;
  size_t settled_done_ = 0;     // with by_batches_: done_ at the last settle()
  double settled_elapsed_ = 0;  // and the seconds since start_ then
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_render_;
  bool finished_ = false;
};

}  // namespace dicebench::host
