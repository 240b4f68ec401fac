// The process-wide CUPTI Activity API recorder: it subscribes once (buffer callbacks; kernel,
// memcpy and memset records from every stream and context of the process) and times calls
// bracketed by begin() and end(). Both synchronize the current device themselves (the caller's
// own synchronize, if any, makes theirs a no-op); end() then flushes CUPTI's buffers and hands back
// the call's records and figures (activity_records.hpp). Used by the dicebench_cuda Python module
// and by the gpu tests.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/base/result.hpp"
#include "harness/timing/activity_records.hpp"

namespace dicebench::timing {

class CuptiRecorder {
 public:
  // 1 MiB holds thousands of records, and CUPTI asks for more buffers when a call needs them. The
  // first CUDA call after each forced flush costs host time that grows with the buffer size
  // (H200, median of 180 calls: 8 MiB 620 us, 1 MiB 238 us, 128 KiB 219 us; 10 us without CUPTI).
  static constexpr std::size_t default_buffer_bytes = std::size_t{1} << 20;

  // The recorder of this process, subscribing on the first call (buffer_bytes, rounded up to a
  // multiple of 8, is the size of each activity buffer; later calls' sizes are ignored). A failed
  // subscription is final for the process: later calls return the same error.
  static Result<CuptiRecorder*> instance(std::size_t buffer_bytes = default_buffer_bytes);

  // CUPTI's clock (cuptiGetTimestamp), the one activity records are stamped with, in ns.
  static Result<std::uint64_t> timestamp();

  // The ID CUPTI gives a stream in its records (cuptiGetStreamIdEx; not cudaStreamGetId's number),
  // for a CUstream / cudaStream_t handle passed as an integer. CUPTI refuses the legacy default
  // stream's handle 0 (CUPTI_ERROR_INVALID_STREAM).
  static Result<std::uint32_t> stream_id(std::uintptr_t stream);

  // Starts a timed call: synchronizes the current device (cudaDeviceSynchronize); with `reassert`
  // (the default) registers the buffer callbacks and enables the recorded kinds again, so another
  // CUPTI client in the process, such as torch.profiler or a candidate, that took them over or
  // disabled them since the last call loses them (measured on an H200: no cost to the call's
  // span, 0.2235 vs 0.2343 ms median for a tiny op); flushes and discards every record of earlier
  // work, resets CUPTI's dropped-record count, issues the marker memset (activity_records.hpp) and
  // returns the host timestamp the call starts at. A begin() while a call is open does not restart
  // it: it marks the call as interfered with (its end() fails) and returns the open call's start,
  // so code inside the timed call cannot move it.
  Result<std::uint64_t> begin(bool reassert = true);

  // Ends the timed call: synchronizes the current device, takes the host end timestamp, flushes
  // (forced) and returns the call's records and figures. Fails, closing the call all the same,
  // without an open call, when the synchronize fails (a sticky CUDA error such as an illegal
  // address), when a begin() came during the call, or when CUPTI reported an error while
  // delivering records.
  Result<CallRecord> end();

  // Closes an open call without a result (the timed function raised); false when none was open.
  bool cancel();

  bool in_call() const;

  CuptiRecorder(const CuptiRecorder&) = delete;
  CuptiRecorder& operator=(const CuptiRecorder&) = delete;

 private:
  struct Callbacks;  // CUPTI's buffer callbacks (cupti_recorder.cpp)
  explicit CuptiRecorder(std::size_t buffer_bytes);
  ~CuptiRecorder() = default;  // never destroyed: CUPTI may call back until the process ends

  std::uint8_t* acquire_buffer(std::size_t& size);
  void complete_buffer(std::uint8_t* buffer, std::size_t size, std::size_t valid_bytes);
  void close_call();
  bool marker_ready();  // creates the marker's stream and buffer on first use

  // The marker memset that gives each call its origin on the device's clock (activity_records.hpp).
  void* marker_ = nullptr;
  void* marker_stream_ = nullptr;  // a cudaStream_t
  std::uint32_t marker_stream_id_ = 0;
  bool marker_failed_ = false;
  bool marker_issued_ = false;

  const std::size_t buffer_bytes_;

  // Shared with CUPTI's callback thread.
  std::atomic<bool> collecting_{false};
  mutable std::mutex records_mutex_;
  ActivityLog log_;
  std::vector<std::uint8_t*> free_buffers_;          // ours, buffer_bytes_ each, idle
  std::unordered_set<std::uint8_t*> owned_buffers_;  // every buffer we allocated
  std::uint64_t unserved_buffer_requests_ = 0;       // requests we could not fill (records dropped)
  std::uint64_t truncated_buffers_ = 0;              // buffers whose reading stopped at an incomplete record
  std::string delivery_error_;                       // first CUPTI error while reading a buffer

  // The caller's side (begin/end/cancel).
  mutable std::mutex call_mutex_;
  bool in_call_ = false;
  bool interfered_ = false;
  std::uint64_t begin_ns_ = 0;
  std::uint64_t ready_ns_ = 0;                              // begin() done: the caller's call starts
  std::unordered_map<std::string, std::string> demangled_;  // mangled -> demangled, cached
};

}  // namespace dicebench::timing
