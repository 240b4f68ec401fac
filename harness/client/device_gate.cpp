// The GPU's leases among the evaluators that share it (device_gate.hpp).
#include "harness/client/device_gate.hpp"

namespace dicebench::harness {

DeviceGate::Lease& DeviceGate::Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    release();
    gate_ = other.gate_;
    use_ = other.use_;
    other.gate_ = nullptr;
  }
  return *this;
}

void DeviceGate::Lease::release() {
  if (gate_) gate_->release(use_);
  gate_ = nullptr;
}

DeviceGate::Lease DeviceGate::acquire(Use use) {
  std::unique_lock lock(mutex_);
  if (use == Use::whole) {
    ++waiting_whole_;
    changed_.wait(lock, [&] { return !whole_ && sharing_ == 0; });
    --waiting_whole_;
    whole_ = true;
  } else {
    changed_.wait(lock, [&] { return !whole_ && waiting_whole_ == 0; });
    ++sharing_;
  }
  return Lease(this, use);
}

int DeviceGate::shared_now() {
  std::lock_guard guard(mutex_);
  return sharing_;
}

void DeviceGate::release(Use use) {
  {
    std::lock_guard guard(mutex_);
    if (use == Use::whole)
      whole_ = false;
    else
      --sharing_;
  }
  changed_.notify_all();
}

}  // namespace dicebench::harness
