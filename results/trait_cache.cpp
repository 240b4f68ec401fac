// The problem trait cache: degenerate traits reused across runs on the same device and tolerance.
#include "results/trait_cache.hpp"

#include "results/store.hpp"

#include <fmt/format.h>

namespace dicebench::results {

Result<std::optional<ProblemTraits>> find_traits(Store& store, const TraitKey& key) {
  constexpr std::string_view context = "cannot read problem traits";
  auto stmt = store.database().prepare(
      "SELECT traits, details, created FROM problem_traits WHERE problem_hash = ? AND device_name = ? AND tolerance = ?",
      context);
  if (!stmt.ok()) return stmt.error();
  stmt->bind_all(key.problem_hash, key.device_name, key.tolerance);
  auto row = stmt->step(context);
  if (!row.ok()) return row.error();
  if (!*row) return std::optional<ProblemTraits>{};
  return std::optional<ProblemTraits>(ProblemTraits{key, stmt->column_text(0), stmt->column_text(1), stmt->column_text(2)});
}

Result<void> put_traits(Store& store, const ProblemTraits& t) {
  const std::string context = fmt::format("cannot store the traits of {}", t.key.problem_hash);
  auto transaction = Transaction::begin(store.database(), context);
  if (!transaction.ok()) return transaction.error();
  auto stmt = store.database().prepare(
      "INSERT OR REPLACE INTO problem_traits (problem_hash, device_name, tolerance, traits, details, created) "
      "VALUES (?, ?, ?, ?, ?, strftime('%Y-%m-%dT%H:%M:%SZ','now'))",
      context);
  if (!stmt.ok()) return stmt.error();
  stmt->bind_all(t.key.problem_hash, t.key.device_name, t.key.tolerance, t.traits_json, t.details_json);
  DICEBENCH_TRY(stmt->run(context));
  return transaction->commit();
}

}  // namespace dicebench::results
