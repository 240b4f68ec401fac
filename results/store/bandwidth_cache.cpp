// The bandwidth cache: one measured memory bandwidth per device name and method.
#include "results/store/bandwidth_cache.hpp"

#include "results/store/store.hpp"

#include <fmt/format.h>

namespace dicebench::results {

Result<std::optional<Bandwidth>> find_bandwidth(Store& store, const std::string& device_name) {
  constexpr std::string_view context = "cannot read device bandwidths";
  auto stmt = store.database().prepare(
      "SELECT method, bytes_per_second FROM device_bandwidth WHERE device_name = ? "
      "ORDER BY created DESC, method LIMIT 1",
      context);
  if (!stmt.ok()) return stmt.error();
  stmt->bind(1, device_name);
  auto row = stmt->step(context);
  if (!row.ok()) return row.error();
  if (!*row) return std::optional<Bandwidth>{};
  return std::optional<Bandwidth>(Bandwidth{stmt->column_double(1), stmt->column_text(0)});
}

Result<void> put_bandwidth(Store& store, const std::string& device_name, const Bandwidth& b) {
  const std::string context = fmt::format("cannot store the bandwidth of {}", device_name);
  auto transaction = Transaction::begin(store.database(), context);
  if (!transaction.ok()) return transaction.error();
  auto stmt = store.database().prepare(
      "INSERT OR REPLACE INTO device_bandwidth (device_name, method, bytes_per_second, created) "
      "VALUES (?, ?, ?, strftime('%Y-%m-%dT%H:%M:%SZ','now'))",
      context);
  if (!stmt.ok()) return stmt.error();
  stmt->bind_all(device_name, b.method, b.bytes_per_second);
  DICEBENCH_TRY(stmt->run(context));
  return transaction->commit();
}

}  // namespace dicebench::results
