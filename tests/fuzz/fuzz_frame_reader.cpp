// Fuzz target: the host's side of the worker protocol, reading what a worker wrote to its output:
// length-prefixed frames read until the stream ends or breaks, each payload read into a message
// (or one error line), whose fields are then read as WorkerProcess::receive reads them.
#include "harness/client/frame_io.hpp"
#include "harness/client/worker_message.hpp"
#include "tests/fuzz/fuzz_support.hpp"

#include <sys/mman.h>
#include <unistd.h>

using namespace dicebench;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A memory file rather than a pipe: a pipe's writer would block on inputs beyond its buffer.
  const int fd = memfd_create("worker-output", MFD_CLOEXEC);
  fuzz::check(fd >= 0, "memfd_create failed");
  fuzz::check(size == 0 || write(fd, data, size) == static_cast<ssize_t>(size), "cannot write the memory file");
  lseek(fd, 0, SEEK_SET);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  size_t consumed = 0;
  std::string payload;
  harness::FrameStatus status;
  while ((status = harness::read_frame(fd, &payload, deadline)) == harness::FrameStatus::ok) {
    consumed += 4 + payload.size();
    fuzz::check(consumed <= size, "a frame longer than the stream");
    auto message = harness::parse_worker_message(payload);
    if (!message) {
      fuzz::check_one_line(message.error().message);
      continue;
    }
    (void)message->value("type", "");
    (void)message->value("stage", "");
    (void)message->value("message", "");
    (void)message->value("protocol", 0);
  }
  close(fd);
  fuzz::check(status != harness::FrameStatus::timeout, "a timeout on a stream that had ended");
  return 0;
}
