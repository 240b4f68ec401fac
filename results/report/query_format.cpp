// Formatting query results as a terminal table, CSV or JSON.
#include "results/report/query_format.hpp"

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>

#include "results/report/text_table.hpp"

namespace dicebench::results {
namespace {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

std::string hex(const Blob& blob) {
  std::string out;
  out.reserve(blob.bytes.size() * 2);
  for (std::uint8_t byte : blob.bytes) out += fmt::format("{:02x}", byte);
  return out;
}

// Shortest text that reads back as the same double.
std::string exact_real(double value) { return fmt::format("{}", value); }

std::string table_real(double value) {
  std::string text = exact_real(value);
  if (text.size() > 12) text = fmt::format("{:.6g}", value);
  return text;
}

// Control characters would break the table's lines: show them escaped.
std::string one_line(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        out += c;
    }
  }
  return out;
}

bool is_number(const Cell& cell) {
  return std::holds_alternative<std::int64_t>(cell) || std::holds_alternative<double>(cell);
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

}  // namespace

std::string format_table(const QueryResult& result, const TableOptions& options) {
  TextTable table;
  table.header = result.columns;
  table.max_cell_width = options.max_cell_width;
  table.right_aligned.assign(result.columns.size(), false);
  // A column is right-aligned when all its non-NULL cells are numbers (and there is one).
  for (size_t c = 0; c < result.columns.size(); ++c) {
    bool any_number = false;
    bool all_numbers = true;
    for (const auto& row : result.rows) {
      if (c >= row.size() || std::holds_alternative<std::monostate>(row[c])) continue;
      if (is_number(row[c])) {
        any_number = true;
      } else {
        all_numbers = false;
      }
    }
    table.right_aligned[c] = any_number && all_numbers;
  }
  for (const auto& row : result.rows) {
    std::vector<std::string> cells;
    cells.reserve(row.size());
    for (const Cell& cell : row) {
      cells.push_back(std::visit(Overloaded{
                                     [&](std::monostate) { return options.null_text; },
                                     [](std::int64_t v) { return fmt::format("{}", v); },
                                     [](double v) { return table_real(v); },
                                     [](const std::string& v) { return one_line(v); },
                                     [](const Blob& v) { return fmt::format("<blob {} bytes>", v.bytes.size()); },
                                 },
                                 cell));
    }
    table.rows.push_back(std::move(cells));
  }
  std::string out = render_text_table(table);
  out += fmt::format("({} {})\n", result.rows.size(), result.rows.size() == 1 ? "row" : "rows");
  return out;
}

std::string format_csv(const QueryResult& result) {
  std::string out;
  for (size_t c = 0; c < result.columns.size(); ++c) {
    if (c > 0) out += ',';
    out += csv_field(result.columns[c]);
  }
  out += '\n';
  for (const auto& row : result.rows) {
    for (size_t c = 0; c < row.size(); ++c) {
      if (c > 0) out += ',';
      out += std::visit(Overloaded{
                            [](std::monostate) { return std::string(); },
                            [](std::int64_t v) { return fmt::format("{}", v); },
                            [](double v) { return exact_real(v); },
                            [](const std::string& v) { return csv_field(v); },
                            [](const Blob& v) { return hex(v); },
                        },
                        row[c]);
    }
    out += '\n';
  }
  return out;
}

std::string format_json(const QueryResult& result) {
  // Unique keys, in column order.
  std::vector<std::string> keys;
  std::map<std::string, int> seen;
  for (const std::string& column : result.columns) {
    std::string key = column;
    while (seen.count(key) != 0) key = fmt::format("{}:{}", column, ++seen[column] + 1);
    seen.emplace(key, 0);
    keys.push_back(std::move(key));
  }
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& row : result.rows) {
    nlohmann::ordered_json object = nlohmann::ordered_json::object();
    for (size_t c = 0; c < row.size() && c < keys.size(); ++c) {
      object[keys[c]] = std::visit(Overloaded{
                                       [](std::monostate) { return nlohmann::ordered_json(nullptr); },
                                       [](std::int64_t v) { return nlohmann::ordered_json(v); },
                                       [](double v) { return nlohmann::ordered_json(v); },
                                       [](const std::string& v) { return nlohmann::ordered_json(v); },
                                       [](const Blob& v) { return nlohmann::ordered_json(hex(v)); },
                                   },
                                   row[c]);
    }
    rows.push_back(std::move(object));
  }
  return rows.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace dicebench::results
