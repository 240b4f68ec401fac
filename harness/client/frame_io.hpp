// Framed messages on file descriptors (PROTOCOL.md): a 4-byte little-endian length, then UTF-8
// JSON. Reads wait with poll() up to a deadline, calling an idle function meanwhile where given.
#pragma once

#include "core/spec/protocol.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

namespace dicebench::harness {

inline constexpr uint32_t kMaxFrameBytes = protocol::kMaxFrameBytes;  // core/spec/protocol.toml
// How often a read waiting for data calls its idle function.
inline constexpr std::chrono::milliseconds kIdleInterval{100};

enum class FrameStatus { ok, timeout, closed, error };

// Writes the whole frame; false when the other end is gone.
bool write_frame(int fd, const std::string& payload);
// Reads one frame into *payload, waiting until `deadline`; `idle`, where given, is called each
// time kIdleInterval passes without data (its time counts towards the deadline).
FrameStatus read_frame(int fd, std::string* payload, std::chrono::steady_clock::time_point deadline,
                       const std::function<void()>& idle = {});

}  // namespace dicebench::harness
