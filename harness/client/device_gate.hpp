// One GPU shared by several evaluators (eval.gpu_slots): their candidates' checks run side by side,
// so a candidate that hangs, or waits on a long load, holds its own slot and no other; what must
// have the GPU to itself (timing a candidate or a baseline, measuring the memory bandwidth, the
// re-judge of a candidate that ran out of memory beside others) takes it whole. A waiting whole
// holder goes first: no new check starts while one waits, and it starts once those running end
// (a candidate that hangs in its checks delays it up to that candidate's time limit).
#pragma once

#include <condition_variable>
#include <mutex>

namespace dicebench::harness {

class DeviceGate {
 public:
  enum class Use { shared, whole };

  // Holds the GPU for one use until it goes out of scope (or release()); an empty lease holds nothing.
  class Lease {
   public:
    Lease() = default;
    Lease(Lease&& other) noexcept : gate_(other.gate_), use_(other.use_) { other.gate_ = nullptr; }
    Lease& operator=(Lease&& other) noexcept;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() { release(); }
    void release();
    bool held() const { return gate_ != nullptr; }
    Use use() const { return use_; }

   private:
    friend class DeviceGate;
    Lease(DeviceGate* gate, Use use) : gate_(gate), use_(use) {}
    DeviceGate* gate_ = nullptr;
    Use use_ = Use::shared;
  };

  // `slots`: the evaluators sharing the GPU.
  explicit DeviceGate(int slots) : slots_(slots) {}
  int slots() const { return slots_; }
  // Shared leases held now (for tests and progress).
  int shared_now();
  // Waits until the GPU can be used so, and holds it.
  Lease acquire(Use use);

 private:
  void release(Use use);

  const int slots_;
  std::mutex mutex_;
  std::condition_variable changed_;
  int sharing_ = 0;        // shared leases held
  bool whole_ = false;     // a whole lease held
  int waiting_whole_ = 0;  // whole leases waited for
};

}  // namespace dicebench::harness
