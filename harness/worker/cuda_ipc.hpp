// CUDA IPC of device allocations without torch's sharing machinery: the handle of the allocation
// around a pointer, and opening and closing another process's handle. Torch's own sharing
// (UntypedStorage._share_cuda_) keeps a reference counter per export in a /dev/shm file that the
// receiver opens by name, which a candidate's private /dev/shm cannot see; the harness's protocol
// already keeps every export alive until the receiver has replied, so no counter is needed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/base/result.hpp"

namespace dicebench::worker {

inline constexpr std::size_t kIpcHandleBytes = 64;  // sizeof(cudaIpcMemHandle_t)

struct IpcExport {
  std::string handle;          // kIpcHandleBytes opaque bytes naming the whole allocation
  std::uintptr_t base = 0;     // the allocation's first byte in this process
  std::size_t size_bytes = 0;  // the allocation's size
};

struct IpcMapping {
  std::uintptr_t base = 0;     // the allocation's first byte in this process
  std::size_t size_bytes = 0;  // the allocation's size, as the driver reports it here (not as the sender says)
};

// The handle of the device allocation that holds `pointer`, on `device`.
Result<IpcExport> ipc_export(std::uintptr_t pointer, int device);

// Maps another process's allocation into this one, on `device`. Each handle may be open once per
// process at a time (the driver refuses a second open); the caller keeps one mapping per handle.
Result<IpcMapping> ipc_open(const std::string& handle, int device);

// Unmaps what ipc_open mapped, after the device has finished every use of it.
Result<void> ipc_close(std::uintptr_t base, int device);

}  // namespace dicebench::worker
