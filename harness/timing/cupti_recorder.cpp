// CUPTI Activity API subscription and the begin/end bracket of a timed call (cupti_recorder.hpp).
#include "harness/timing/cupti_recorder.hpp"

#include <cuda_runtime_api.h>
#include <cupti.h>

#include <algorithm>
#include <cstdlib>
#include <new>
#include <utility>

#include "harness/timing/record_names.hpp"

namespace dicebench::timing {

namespace {

// The activity kinds recorded. CONCURRENT_KERNEL (not KERNEL, which serializes kernels) gives one
// record per kernel on any stream; MEMCPY2 is peer-to-peer copies.
constexpr CUpti_ActivityKind recorded_kinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMCPY2,
    CUPTI_ACTIVITY_KIND_MEMSET,
};

// A device-wide synchronize of the current device, so that neither end of a call depends on the
// caller's own (Python-level, hence patchable) synchronize. A sticky CUDA error shows here.
Result<void> synchronize_device(const char* where) {
  const cudaError_t status = cudaDeviceSynchronize();
  if (status != cudaSuccess) {
    return make_error(std::string("cudaDeviceSynchronize in ") + where + " failed: " + cudaGetErrorName(status) + " (" +
                      cudaGetErrorString(status) + ")");
  }
  return {};
}

// The record layouts of the CUPTI headers built against. A newer libcupti at run time only appends
// fields to these, so reading them as these types stays valid.
using KernelActivity = CUpti_ActivityKernel10;
using MemcpyActivity = CUpti_ActivityMemcpy6;
using PeerMemcpyActivity = CUpti_ActivityMemcpyPtoP4;
using MemsetActivity = CUpti_ActivityMemset4;

std::string cupti_message(CUptiResult status) {
  const char* text = nullptr;
  if (cuptiGetResultString(status, &text) != CUPTI_SUCCESS || text == nullptr) {
    return "CUPTI error " + std::to_string(static_cast<int>(status));
  }
  return text;
}

Error cupti_error(const char* call, CUptiResult status) {
  return make_error(std::string(call) + " failed: " + cupti_message(status));
}

#define DICEBENCH_CUPTI(call)                             \
  do {                                                    \
    const CUptiResult dicebench_cupti_status_ = (call);   \
    if (dicebench_cupti_status_ != CUPTI_SUCCESS) {       \
      return cupti_error(#call, dicebench_cupti_status_); \
    }                                                     \
  } while (0)

std::mutex creation_mutex;
CuptiRecorder* the_recorder = nullptr;  // the subscribed recorder, once instance() succeeded
std::string creation_failure;           // why instance() failed, once it did
// What CUPTI's callbacks talk to: set before the first registration and never reset or freed,
// since CUPTI may call back until the process ends (a failed subscription included).
CuptiRecorder* callback_target = nullptr;

}  // namespace

struct CuptiRecorder::Callbacks {
  static void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
    *max_records = 0;  // as many as fit
    *buffer = callback_target->acquire_buffer(*size);
  }

  static void CUPTIAPI buffer_completed(CUcontext /*context*/, std::uint32_t /*stream*/, std::uint8_t* buffer,
                                        std::size_t size, std::size_t valid_bytes) {
    if (buffer != nullptr) callback_target->complete_buffer(buffer, size, valid_bytes);
  }

  static Result<void> subscribe() {
    DICEBENCH_CUPTI(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
    for (CUpti_ActivityKind kind : recorded_kinds) DICEBENCH_CUPTI(cuptiActivityEnable(kind));
    return {};
  }
};

CuptiRecorder::CuptiRecorder(std::size_t buffer_bytes) : buffer_bytes_((buffer_bytes + 7) / 8 * 8) {}

Result<CuptiRecorder*> CuptiRecorder::instance(std::size_t buffer_bytes) {
  std::lock_guard lock(creation_mutex);
  if (the_recorder != nullptr) return the_recorder;
  if (!creation_failure.empty()) return make_error(creation_failure);
  if (buffer_bytes < 1024) return make_error("CUPTI activity buffers must hold at least 1024 bytes");
  callback_target = new CuptiRecorder(buffer_bytes);
  if (auto subscribed = Callbacks::subscribe(); !subscribed) {
    // Stop what was started; callback_target stays for any callback still to come.
    for (CUpti_ActivityKind kind : recorded_kinds) cuptiActivityDisable(kind);
    creation_failure = "cannot subscribe to CUPTI activity records: " + subscribed.error().message;
    return make_error(creation_failure);
  }
  the_recorder = callback_target;
  return the_recorder;
}

Result<std::uint64_t> CuptiRecorder::timestamp() {
  std::uint64_t now = 0;
  DICEBENCH_CUPTI(cuptiGetTimestamp(&now));
  return now;
}

Result<std::uint32_t> CuptiRecorder::stream_id(std::uintptr_t stream) {
  std::uint32_t id = 0;
  DICEBENCH_CUPTI(cuptiGetStreamIdEx(nullptr, reinterpret_cast<CUstream>(stream), 0, &id));
  return id;
}

std::uint8_t* CuptiRecorder::acquire_buffer(std::size_t& size) {
  std::lock_guard lock(records_mutex_);
  if (!free_buffers_.empty()) {
    std::uint8_t* buffer = free_buffers_.back();
    free_buffers_.pop_back();
    size = buffer_bytes_;
    return buffer;
  }
  // CUPTI needs buffers aligned to ACTIVITY_RECORD_ALIGNMENT (8).
  auto* buffer = static_cast<std::uint8_t*>(std::aligned_alloc(8, buffer_bytes_));
  if (buffer == nullptr) {
    ++unserved_buffer_requests_;
    size = 0;
    return nullptr;
  }
  owned_buffers_.insert(buffer);
  size = buffer_bytes_;
  return buffer;
}

void CuptiRecorder::complete_buffer(std::uint8_t* buffer, std::size_t size, std::size_t valid_bytes) {
  // Records arriving outside a timed call belong to untimed work: the buffer goes straight back.
  ActivityLog parsed;
  bool truncated = false;
  std::string error;
  if (collecting_.load(std::memory_order_acquire)) {
    CUpti_Activity* record = nullptr;
    while (true) {
      const CUptiResult status = cuptiActivityGetNextRecord(buffer, valid_bytes, &record);
      if (status == CUPTI_ERROR_MAX_LIMIT_REACHED) break;
      if (status == CUPTI_ERROR_INVALID_KIND) {  // an incomplete record: the rest is unreadable
        truncated = true;
        break;
      }
      if (status != CUPTI_SUCCESS) {
        error = "cuptiActivityGetNextRecord failed: " + cupti_message(status);
        break;
      }
      switch (record->kind) {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
          const auto* kernel = reinterpret_cast<const KernelActivity*>(record);
          KernelRecord out;
          out.mangled = kernel->name != nullptr ? kernel->name : "";
          out.start_ns = kernel->start;
          out.end_ns = kernel->end;
          out.grid = {kernel->gridX, kernel->gridY, kernel->gridZ};
          out.block = {kernel->blockX, kernel->blockY, kernel->blockZ};
          out.stream = kernel->streamId;
          out.device = kernel->deviceId;
          out.shared_bytes = std::int64_t{kernel->staticSharedMemory} + std::int64_t{kernel->dynamicSharedMemory};
          out.correlation = kernel->correlationId;
          parsed.kernels.push_back(std::move(out));
          break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY: {
          const auto* copy = reinterpret_cast<const MemcpyActivity*>(record);
          parsed.memcpys.push_back({memcpy_kind_name(copy->copyKind), copy->bytes, copy->start, copy->end,
                                    copy->streamId, copy->deviceId, copy->correlationId});
          break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY2: {
          const auto* copy = reinterpret_cast<const PeerMemcpyActivity*>(record);
          parsed.memcpys.push_back({memcpy_kind_name(copy->copyKind), copy->bytes, copy->start, copy->end,
                                    copy->streamId, copy->deviceId, copy->correlationId});
          break;
        }
        case CUPTI_ACTIVITY_KIND_MEMSET: {
          const auto* set = reinterpret_cast<const MemsetActivity*>(record);
          parsed.memsets.push_back(
              {set->bytes, set->start, set->end, set->streamId, set->deviceId, set->correlationId});
          break;
        }
        default:
          break;
      }
    }
  }
  std::lock_guard lock(records_mutex_);
  auto append = [](auto& to, auto& from) {
    to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
  };
  append(log_.kernels, parsed.kernels);
  append(log_.memcpys, parsed.memcpys);
  append(log_.memsets, parsed.memsets);
  if (truncated) ++truncated_buffers_;
  if (!error.empty() && delivery_error_.empty()) delivery_error_ = std::move(error);
  // A buffer another CUPTI client allocated (handed to us after we took the callbacks back) is
  // read but never reused or freed: its size and allocator are not ours to know.
  if (size == buffer_bytes_ && owned_buffers_.contains(buffer)) free_buffers_.push_back(buffer);
}

Result<std::uint64_t> CuptiRecorder::begin(bool reassert) {
  std::lock_guard call_lock(call_mutex_);
  if (in_call_) {
    interfered_ = true;
    return begin_ns_;
  }
  // Earlier work finishes and its records are delivered now, while not collecting.
  collecting_.store(false, std::memory_order_release);
  DICEBENCH_TRY(synchronize_device("begin()"));
  if (reassert) DICEBENCH_TRY(Callbacks::subscribe());
  DICEBENCH_CUPTI(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  std::size_t dropped = 0;
  DICEBENCH_CUPTI(cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped));  // resets the count
  {
    std::lock_guard lock(records_mutex_);
    log_ = {};
    unserved_buffer_requests_ = 0;
    truncated_buffers_ = 0;
    delivery_error_.clear();
  }
  collecting_.store(true, std::memory_order_release);
  std::uint64_t start = 0;
  if (const CUptiResult status = cuptiGetTimestamp(&start); status != CUPTI_SUCCESS) {
    collecting_.store(false, std::memory_order_release);
    return cupti_error("cuptiGetTimestamp(&start)", status);
  }
  // The span's origin on the device's clock: the device is idle (synchronized above), so this
  // memset starts before anything the timed call launches.
  marker_issued_ =
      marker_ready() && cudaMemsetAsync(marker_, 0, 4, static_cast<cudaStream_t>(marker_stream_)) == cudaSuccess;
  begin_ns_ = start;
  in_call_ = true;
  interfered_ = false;
  // Last: the caller's call starts now (its host time runs from here to end()'s entry).
  if (cuptiGetTimestamp(&ready_ns_) != CUPTI_SUCCESS) ready_ns_ = 0;
  return start;
}

bool CuptiRecorder::marker_ready() {
  if (marker_ != nullptr) return true;
  if (marker_failed_) return false;
  cudaStream_t stream = nullptr;
  void* buffer = nullptr;
  if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
    marker_failed_ = true;
    return false;
  }
  auto id = stream_id(reinterpret_cast<std::uintptr_t>(stream));
  if (!id || cudaMalloc(&buffer, 4) != cudaSuccess) {
    cudaStreamDestroy(stream);
    marker_failed_ = true;
    return false;
  }
  marker_stream_ = stream;
  marker_stream_id_ = *id;
  marker_ = buffer;
  return true;
}

void CuptiRecorder::close_call() {
  collecting_.store(false, std::memory_order_release);
  in_call_ = false;
  interfered_ = false;
}

Result<CallRecord> CuptiRecorder::end() {
  std::uint64_t call_end = 0;  // first: the caller's call has just returned
  if (cuptiGetTimestamp(&call_end) != CUPTI_SUCCESS) call_end = 0;
  std::lock_guard call_lock(call_mutex_);
  if (!in_call_) return make_error("end() without begin()");
  struct Closer {
    CuptiRecorder* recorder;
    ~Closer() { recorder->close_call(); }
  } closer{this};

  DICEBENCH_TRY(synchronize_device("end()"));
  std::uint64_t host_end = 0;
  DICEBENCH_CUPTI(cuptiGetTimestamp(&host_end));
  DICEBENCH_CUPTI(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  std::size_t dropped = 0;
  DICEBENCH_CUPTI(cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped));
  collecting_.store(false, std::memory_order_release);

  ActivityLog log;
  std::uint64_t unserved = 0;
  std::uint64_t truncated = 0;
  std::string delivery_error;
  {
    std::lock_guard lock(records_mutex_);
    log = std::exchange(log_, {});
    unserved = unserved_buffer_requests_;
    truncated = truncated_buffers_;
    delivery_error = std::move(delivery_error_);
    delivery_error_.clear();
  }
  if (interfered_) return make_error("begin() was called again while the timed call was running");
  if (!delivery_error.empty()) return make_error(delivery_error);

  for (KernelRecord& kernel : log.kernels) {
    auto it = demangled_.find(kernel.mangled);
    if (it == demangled_.end()) it = demangled_.emplace(kernel.mangled, demangle(kernel.mangled)).first;
    kernel.name = it->second;
  }
  CallRecord call = assemble_call({begin_ns_, ready_ns_, call_end, host_end}, std::move(log),
                                  marker_issued_ ? std::optional<std::uint32_t>(marker_stream_id_) : std::nullopt);
  // CUPTI counts the records lost to a declined buffer request; a declined request with no count
  // (should not happen) still marks the call as having lost records.
  call.dropped = std::max<std::uint64_t>(dropped, unserved > 0 ? 1 : 0);
  call.incomplete += truncated;
  return call;
}

bool CuptiRecorder::cancel() {
  std::lock_guard call_lock(call_mutex_);
  if (!in_call_) return false;
  close_call();
  return true;
}

bool CuptiRecorder::in_call() const {
  std::lock_guard call_lock(call_mutex_);
  return in_call_;
}

}  // namespace dicebench::timing
