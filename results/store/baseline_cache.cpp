// The baseline cache: reference timings reused across runs on the same GPU, torch and method.
#include "results/store/baseline_cache.hpp"

#include "results/store/store.hpp"

#include <fmt/format.h>

namespace dicebench::results {

Result<std::optional<Timing>> find_baseline(Store& store, const BaselineKey& key) {
  constexpr std::string_view context = "cannot read baselines";
  auto stmt = store.database().prepare(
      "SELECT median_ms, mean_ms, std_ms, min_ms, max_ms, p10_ms, p90_ms, trials FROM baselines "
      "WHERE problem_hash = ? AND device_name = ? AND torch_version = ? AND method = ?",
      context);
  if (!stmt.ok()) return stmt.error();
  stmt->bind_all(key.problem_hash, key.device_name, key.torch_version, key.method);
  auto row = stmt->step(context);
  if (!row.ok()) return row.error();
  if (!*row) return std::optional<Timing>{};
  Timing b;
  b.median_ms = stmt->column_double(0);
  b.mean_ms = stmt->column_double(1);
  b.std_ms = stmt->column_double(2);
  b.min_ms = stmt->column_double(3);
  b.max_ms = stmt->column_double(4);
  b.p10_ms = stmt->column_double(5);
  b.p90_ms = stmt->column_double(6);
  b.trials = static_cast<int>(stmt->column_int64(7));
  return std::optional<Timing>(std::move(b));
}

Result<void> put_baseline(Store& store, const BaselineKey& key, const Timing& b) {
  const std::string context = fmt::format("cannot store the baseline of {}", key.problem_hash);
  auto transaction = Transaction::begin(store.database(), context);
  if (!transaction.ok()) return transaction.error();
  auto stmt = store.database().prepare(
      "INSERT OR REPLACE INTO baselines (problem_hash, device_name, torch_version, method, median_ms, mean_ms, std_ms, "
      "min_ms, max_ms, p10_ms, p90_ms, trials, created) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, strftime('%Y-%m-%dT%H:%M:%SZ','now'))",
      context);
  if (!stmt.ok()) return stmt.error();
  stmt->bind_all(key.problem_hash, key.device_name, key.torch_version, key.method, b.median_ms, b.mean_ms, b.std_ms,
                 b.min_ms, b.max_ms, b.p10_ms, b.p90_ms, b.trials);
  auto done = stmt->step(context);
  if (!done.ok()) return done.error();
  return transaction->commit();
}

}  // namespace dicebench::results
