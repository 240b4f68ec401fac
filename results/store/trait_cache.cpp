// The problem trait cache: degenerate traits reused across runs on the same device and tolerance.
#include "results/store/trait_cache.hpp"

#include "results/store/store.hpp"

#include <fmt/format.h>

namespace dicebench::results {

Result<std::optional<ProblemTraits>> find_traits(Store& store, const TraitKey& key) {
  constexpr std::string_view context = "cannot read problem traits";
  auto stmt = store.database().prepare(
      "SELECT traits, details FROM problem_traits WHERE problem_hash = ? AND device_name = ? AND tolerance = ?",
      context);
  if (!stmt.ok()) return stmt.error();
  stmt->bind_all(key.problem_hash, key.device_name, key.tolerance);
  auto row = stmt->step(context);
  if (!row.ok()) return row.error();
  if (!*row) return std::optional<ProblemTraits>{};
  ProblemTraits traits;
  traits.traits = nlohmann::json::parse(stmt->column_text(0), nullptr, /*allow_exceptions=*/false);
  traits.details = nlohmann::json::parse(stmt->column_text(1), nullptr, /*allow_exceptions=*/false);
  if (!traits.traits.is_array() || !traits.details.is_object())  // the table's CHECK makes them JSON
    return make_error(
        fmt::format("{}: the stored traits of {} are not a JSON array and object", store.path(), key.problem_hash));
  return std::optional<ProblemTraits>(std::move(traits));
}

Result<void> put_traits(Store& store, const TraitKey& key, const ProblemTraits& t) {
  const std::string context = fmt::format("cannot store the traits of {}", key.problem_hash);
  auto transaction = Transaction::begin(store.database(), context);
  if (!transaction.ok()) return transaction.error();
  auto stmt = store.database().prepare(
      "INSERT OR REPLACE INTO problem_traits (problem_hash, device_name, tolerance, traits, details, created) "
      "VALUES (?, ?, ?, ?, ?, strftime('%Y-%m-%dT%H:%M:%SZ','now'))",
      context);
  if (!stmt.ok()) return stmt.error();
  const auto text = [](const nlohmann::json& j) {
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  stmt->bind_all(key.problem_hash, key.device_name, key.tolerance, text(t.traits), text(t.details));
  DICEBENCH_TRY(stmt->run(context));
  return transaction->commit();
}

}  // namespace dicebench::results
