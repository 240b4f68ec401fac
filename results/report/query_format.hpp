// Output formats of `dicebench query`: an aligned terminal table, CSV (RFC 4180 quoting) and
// JSON (an array of objects, one per row).
#pragma once

#include <cstddef>
#include <string>

#include "results/store/query.hpp"

namespace dicebench::results {

struct TableOptions {
  std::size_t max_cell_width = 60;  // longer cells are cut with "…"
  std::string null_text = "NULL";
};

// Header, separator, aligned rows (numbers right-aligned), then "(N rows)".
std::string format_table(const QueryResult& result, const TableOptions& options = {});
// Header line, then one line per row; fields holding , " CR or LF are quoted with "" doubled.
// NULL is an empty field, a blob its bytes in hex.
std::string format_csv(const QueryResult& result);
// [{"column": value, ...}, ...]: integers and reals as numbers, NULL as null, blobs as hex
// strings; a repeated column name gets a suffix (":2", ":3", ...). No trailing newline.
std::string format_json(const QueryResult& result);

}  // namespace dicebench::results
