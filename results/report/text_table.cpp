// Rendering of aligned plain-text tables.
#include "results/report/text_table.hpp"

#include <algorithm>

namespace dicebench::results {
namespace {

bool is_continuation(unsigned char byte) { return (byte & 0xC0) == 0x80; }

}  // namespace

std::size_t display_width(std::string_view text) {
  std::size_t width = 0;
  for (char c : text) {
    if (!is_continuation(static_cast<unsigned char>(c))) ++width;
  }
  return width;
}

std::string truncate_to_width(std::string_view text, std::size_t width) {
  if (display_width(text) <= width) return std::string(text);
  if (width == 0) return {};
  // Keep width - 1 code points, then the ellipsis.
  std::size_t kept = 0;
  std::size_t end = 0;
  while (end < text.size()) {
    if (!is_continuation(static_cast<unsigned char>(text[end]))) {
      if (kept == width - 1) break;
      ++kept;
    }
    ++end;
  }
  return std::string(text.substr(0, end)) + "\u2026";
}

std::string render_text_table(const TextTable& table) {
  const std::size_t columns = table.header.size();
  auto cell_text = [&](const std::string& cell) {
    return table.max_cell_width == 0 ? cell : truncate_to_width(cell, table.max_cell_width);
  };
  std::vector<std::vector<std::string>> cells;
  cells.reserve(table.rows.size() + 1);
  cells.push_back({});
  for (const std::string& name : table.header) cells.back().push_back(cell_text(name));
  for (const auto& row : table.rows) {
    cells.push_back({});
    for (std::size_t c = 0; c < columns; ++c)
      cells.back().push_back(c < row.size() ? cell_text(row[c]) : std::string());
  }
  std::vector<std::size_t> widths(columns, 0);
  for (const auto& row : cells) {
    for (std::size_t c = 0; c < columns; ++c) widths[c] = std::max(widths[c], display_width(row[c]));
  }

  std::string out;
  auto emit_row = [&](const std::vector<std::string>& row) {
    std::string line;
    for (std::size_t c = 0; c < columns; ++c) {
      if (c > 0) line += "  ";
      const std::size_t pad = widths[c] - display_width(row[c]);
      const bool right = c < table.right_aligned.size() && table.right_aligned[c];
      if (right) line.append(pad, ' ');
      line += row[c];
      if (!right) line.append(pad, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line;
    out += '\n';
  };
  emit_row(cells.front());
  std::string separator;
  for (std::size_t c = 0; c < columns; ++c) {
    if (c > 0) separator += "  ";
    separator.append(widths[c], '-');
  }
  out += separator;
  out += '\n';
  for (std::size_t r = 1; r < cells.size(); ++r) emit_row(cells[r]);
  return out;
}

}  // namespace dicebench::results
