// Aligned plain-text tables for the terminal (query output, reports, run summaries): UTF-8
// aware widths, a header with a separator line, long cells cut with "…".
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace dicebench::results {

struct TextTable {
  std::vector<std::string> header;
  std::vector<bool> right_aligned;  // per column; missing entries mean left-aligned
  std::vector<std::vector<std::string>> rows;
  std::size_t max_cell_width = 0;  // 0: no limit
};

// Columns separated by two spaces, a line of dashes under the header, no trailing spaces;
// every line ends with '\n'.
std::string render_text_table(const TextTable& table);

// Width on a terminal, counted in code points (every code point one column).
std::size_t display_width(std::string_view text);
// Cuts `text` to at most `width` columns, ending with "…" when something was cut.
std::string truncate_to_width(std::string_view text, std::size_t width);

}  // namespace dicebench::results
