// The judgements table (judgements.hpp).
#include "results/store/judgements.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace dicebench::results {

Result<void> put_judgement(Store& store, const Judgement& judgement, const std::string& settings) {
  const std::string context = fmt::format("cannot store the judgement of {}", judgement.id);
  auto stmt = store.database().prepare(
      "INSERT OR REPLACE INTO judgements (id, created, settings, problem, status, verdict, speedup, reward, "
      "reward_shape, seconds, record) VALUES (?, strftime('%Y-%m-%dT%H:%M:%fZ','now'), ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      context);
  if (!stmt) return stmt.error();
  const Evaluation* e = judgement.evaluation ? &*judgement.evaluation : nullptr;
  stmt->bind_all(judgement.id, settings, judgement.problem, std::string(item_status_name(judgement.status)),
                 e ? std::optional<std::string>(std::string(verdict_name(e->verdict))) : std::nullopt,
                 e ? e->speedup : std::nullopt, judgement.reward,
                 judgement.reward_shape.empty() ? std::nullopt : std::optional(judgement.reward_shape),
                 e ? std::optional(e->seconds) : std::nullopt,
                 nlohmann::json(judgement).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  return stmt->run(context);
}

Result<std::optional<Judgement>> find_judgement(Store& store, const std::string& id, const std::string& settings) {
  const std::string context = fmt::format("cannot read the judgement of {}", id);
  auto stmt = store.database().prepare("SELECT record FROM judgements WHERE id = ? AND settings = ?", context);
  if (!stmt) return stmt.error();
  stmt->bind_all(id, settings);
  auto row = stmt->step(context);
  if (!row) return row.error();
  if (!*row) return std::optional<Judgement>{};
  try {
    return std::optional(nlohmann::json::parse(stmt->column_text(0)).get<Judgement>());
  } catch (const nlohmann::json::exception& error) {
    return make_error(ErrorKind::io, fmt::format("{}: {}: {}", store.path(), context, error.what()));
  }
}

}  // namespace dicebench::results
