// Framed messages on file descriptors (PROTOCOL.md): a 4-byte little-endian length, then UTF-8
// JSON. Reads wait with poll() up to a deadline.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace dicebench::harness {

inline constexpr uint32_t kMaxFrameBytes = 64u << 20;

enum class FrameStatus { ok, timeout, closed, error };

// Writes the whole frame; false when the other end is gone.
bool write_frame(int fd, const std::string& payload);
// Reads one frame into *payload, waiting until `deadline`.
FrameStatus read_frame(int fd, std::string* payload, std::chrono::steady_clock::time_point deadline);

}  // namespace dicebench::harness
