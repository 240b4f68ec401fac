// dicebench::database (core/api/include/dicebench/evaluation.hpp): results databases, read only.
#include "dicebench/evaluation.hpp"

#include "results/report/report.hpp"
#include "results/report/report_format.hpp"
#include "results/store/query.hpp"
#include "results/store/run_results.hpp"
#include "results/store/schema.hpp"
#include "results/store/store.hpp"

namespace dicebench::database {

int schema_version() { return results::kSchemaVersion; }

Result<int> check(const std::string& path) {
  auto store = results::Store::open(path, results::OpenMode::ReadOnly);
  if (!store) return store.error();
  return store->schema_version();
}

Result<Table> query(const std::string& path, const std::string& sql) {
  auto result = results::run_query(path, sql);
  if (!result) return result.error();
  Table table{std::move(result->columns), {}};
  table.rows.reserve(result->rows.size());
  for (auto& row : result->rows) {
    std::vector<Cell> cells;
    cells.reserve(row.size());
    for (auto& cell : row)
      cells.push_back(std::visit(
          [](auto& value) -> Cell {
            if constexpr (std::is_same_v<std::decay_t<decltype(value)>, results::Blob>)
              return std::move(value.bytes);
            else
              return std::move(value);
          },
          cell));
    table.rows.push_back(std::move(cells));
  }
  return table;
}

Result<std::string> report_json(const std::string& path, std::int64_t run) {
  auto store = results::Store::open(path, results::OpenMode::ReadOnly);
  if (!store) return store.error();
  auto loaded = results::load_run_results(*store, run);
  if (!loaded) return loaded.error();
  return results::report_json(results::compute_report(*loaded))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace dicebench::database
