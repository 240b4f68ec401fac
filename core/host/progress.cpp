// Progress of long work: live terminal line or periodic log lines, then a summary.
#include "core/host/progress.hpp"

#include "core/host/log.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

namespace dicebench::host {
namespace {
Progress* g_active = nullptr;
std::string g_active_line;

void clear_live_line() {
  if (g_active) std::fputs("\r\033[K", stderr);
}
void redraw_live_line() {
  if (g_active) std::fputs(g_active_line.c_str(), stderr);
}
// Without a terminal, after another log line (a plugin's retries, say): the progress line again
// where the count moved since it was last written, so a long wait never shows a stale count.
void log_moved_line() {
  if (g_active) g_active->log_if_moved();
}
constexpr auto kLogInterval = std::chrono::seconds(10);
constexpr auto kLiveInterval = std::chrono::milliseconds(100);
}  // namespace

Progress::Progress(std::string label, size_t total, std::string unit, int interactive)
    : label_(std::move(label)),
      total_(total),
      unit_(std::move(unit)),
      interactive_(interactive < 0 ? isatty(STDERR_FILENO) == 1 : interactive == 1),
      start_(std::chrono::steady_clock::now()),
      last_render_(start_) {
  g_active = this;
  if (interactive_)
    set_status_line_hooks(&clear_live_line, &redraw_live_line);
  else
    set_status_line_hooks(nullptr, &log_moved_line);
  render(true);
}

Progress::~Progress() {
  if (!finished_) finish();
}

std::string Progress::format_duration(double seconds) {
  if (seconds < 60) return fmt::format("{:.1f} s", seconds);
  const long total = static_cast<long>(seconds + 0.5);
  if (total < 3600) return fmt::format("{} min {:02} s", total / 60, total % 60);
  return fmt::format("{} h {:02} min", total / 3600, (total % 3600) / 60);
}

std::string Progress::line() const {
  const double elapsed =
      by_batches_ ? settled_elapsed_ : std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const size_t done = done_;
  const size_t paced = by_batches_ ? settled_done_ : done;
  const double rate = elapsed > 0 ? static_cast<double>(paced) / elapsed : 0.0;
  std::string text = fmt::format("{}: {}/{} {}", label_, done, total_, unit_);
  if (total_ > 0) text += fmt::format(" ({:.0f}%)", 100.0 * static_cast<double>(done) / static_cast<double>(total_));
  if (paced > 0 && elapsed > 0) {
    text += fmt::format(", {:.2f} {}/s", rate, unit_);
    if (done < total_) text += ", ETA " + format_duration(static_cast<double>(total_ - done) / rate);
  }
  return text;
}

void Progress::render(bool force) {
  const auto now = std::chrono::steady_clock::now();
  if (interactive_) {
    if (!force && now - last_render_ < kLiveInterval) return;
    last_render_ = now;
    g_active_line = line();
    std::fputs("\r\033[K", stderr);
    std::fputs(g_active_line.c_str(), stderr);
    std::fflush(stderr);
    return;
  }
  if (!force && now - last_render_ < kLogInterval) return;
  last_render_ = now;
  logged_done_ = done_;  // before: log_message's hook would write it again
  log_message(LogLevel::info, line());
}

void Progress::log_if_moved() {
  if (done_ == logged_done_) return;
  logged_done_ = done_;
  last_render_ = std::chrono::steady_clock::now();
  const std::string text = line();
  std::fprintf(stderr, "%s\n", text.c_str());  // under log_message's lock, after its line
}

void Progress::advance(size_t by) {
  done_ += by;
  render(done_ == total_);
}

void Progress::settle() {
  settled_done_ = done_;
  settled_elapsed_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  render(interactive_);  // the live line at once; a log line only at its interval
}

std::string Progress::finish() {
  finished_ = true;
  if (interactive_) {
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
  }
  if (g_active == this) {
    g_active = nullptr;
    set_status_line_hooks(nullptr, nullptr);
  }
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const size_t done = done_;
  return fmt::format("{} {} in {} ({:.2f} {}/s)", done, unit_, format_duration(elapsed),
                     elapsed > 0 ? static_cast<double>(done) / elapsed : 0.0, unit_);
}

}  // namespace dicebench::host
