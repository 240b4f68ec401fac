// The gate of a GPU several evaluators share (harness/client/device_gate.hpp): checks side by
// side, a whole lease alone, a waiting whole lease ahead of new shared ones.
#include "harness/client/device_gate.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

using dicebench::harness::DeviceGate;
using namespace std::chrono_literals;

TEST_CASE("shared leases are held side by side, and a whole lease waits for every one of them") {
  DeviceGate gate(3);
  auto first = gate.acquire(DeviceGate::Use::shared);
  auto second = gate.acquire(DeviceGate::Use::shared);  // would block forever if shares excluded each other
  CHECK(gate.shared_now() == 2);
  auto whole = std::async(std::launch::async, [&] { return gate.acquire(DeviceGate::Use::whole); });
  CHECK(whole.wait_for(100ms) == std::future_status::timeout);
  first.release();
  CHECK(whole.wait_for(100ms) == std::future_status::timeout);
  second.release();
  REQUIRE(whole.wait_for(2s) == std::future_status::ready);
  auto held = whole.get();
  CHECK(held.held());
  CHECK(held.use() == DeviceGate::Use::whole);
  CHECK(gate.shared_now() == 0);
}

TEST_CASE("while a whole lease is held or waited for, no shared lease starts") {
  DeviceGate gate(2);
  auto running = gate.acquire(DeviceGate::Use::shared);
  auto whole = std::async(std::launch::async, [&] {
    auto lease = gate.acquire(DeviceGate::Use::whole);
    std::this_thread::sleep_for(100ms);
    return lease.held();
  });
  std::this_thread::sleep_for(50ms);  // the whole lease is waited for now
  std::atomic<bool> shared_started = false;
  auto later = std::async(std::launch::async, [&] {
    auto lease = gate.acquire(DeviceGate::Use::shared);
    shared_started = true;
  });
  CHECK(later.wait_for(100ms) == std::future_status::timeout);
  CHECK_FALSE(shared_started);
  running.release();  // the whole lease goes, then the shared one
  CHECK(whole.get());
  REQUIRE(later.wait_for(2s) == std::future_status::ready);
  CHECK(shared_started);
}

TEST_CASE("a lease moved is released once, by its last holder") {
  DeviceGate gate(2);
  DeviceGate::Lease kept;
  CHECK_FALSE(kept.held());
  {
    auto lease = gate.acquire(DeviceGate::Use::shared);
    kept = std::move(lease);
  }
  CHECK(gate.shared_now() == 1);
  kept = gate.acquire(DeviceGate::Use::shared);  // the old one is released as the new one is taken
  CHECK(gate.shared_now() == 1);
  kept.release();
  CHECK(gate.shared_now() == 0);
  auto whole = gate.acquire(DeviceGate::Use::whole);  // nothing left held
  CHECK(whole.held());
}
