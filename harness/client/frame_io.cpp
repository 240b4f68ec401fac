// Framed messages on file descriptors, with deadlines.
#include "harness/client/frame_io.hpp"

#include <poll.h>
#include <unistd.h>

#include <cerrno>

namespace dicebench::harness {
namespace {

FrameStatus read_exactly(int fd, char* out, size_t size, std::chrono::steady_clock::time_point deadline,
                         const std::function<void()>& idle) {
  size_t done = 0;
  while (done < size) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return FrameStatus::timeout;
    pollfd p{fd, POLLIN, 0};
    long long wait = std::min<long long>(left.count(), 1'000'000);
    if (idle) wait = std::min<long long>(wait, kIdleInterval.count());
    const int ready = poll(&p, 1, static_cast<int>(wait));
    if (ready < 0) {
      if (errno == EINTR) continue;
      return FrameStatus::error;
    }
    if (ready == 0) {
      if (idle) idle();
      continue;
    }
    const ssize_t n = read(fd, out + done, size - done);
    if (n == 0) return FrameStatus::closed;
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return FrameStatus::error;
    }
    done += static_cast<size_t>(n);
  }
  return FrameStatus::ok;
}

}  // namespace

bool write_frame(int fd, const std::string& payload) {
  if (payload.size() > kMaxFrameBytes) return false;
  const uint32_t size = static_cast<uint32_t>(payload.size());
  std::string frame(4, '\0');
  for (int i = 0; i < 4; ++i) frame[static_cast<size_t>(i)] = static_cast<char>((size >> (8 * i)) & 0xFF);
  frame += payload;
  size_t done = 0;
  while (done < frame.size()) {
    const ssize_t n = write(fd, frame.data() + done, frame.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

FrameStatus read_frame(int fd, std::string* payload, std::chrono::steady_clock::time_point deadline,
                       const std::function<void()>& idle) {
  unsigned char header[4];
  FrameStatus status = read_exactly(fd, reinterpret_cast<char*>(header), 4, deadline, idle);
  if (status != FrameStatus::ok) return status;
  const uint32_t size = header[0] | (header[1] << 8) | (header[2] << 16) | (static_cast<uint32_t>(header[3]) << 24);
  if (size > kMaxFrameBytes) return FrameStatus::error;
  payload->assign(size, '\0');
  return read_exactly(fd, payload->data(), size, deadline, idle);
}

}  // namespace dicebench::harness
