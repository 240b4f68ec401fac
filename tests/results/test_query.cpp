// `dicebench query`: read-only execution (writes, pragmas that set, ATTACH and several
// statements are refused) and the table, CSV and JSON output formats.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "results/report/query_format.hpp"
#include "results/store/query.hpp"
#include "test_support.hpp"

using namespace dicebench;
using namespace dicebench::results;
using namespace dicebench::results::testing;

namespace {

std::string filled_database(const TempDir& dir) {
  const std::string path = dir.file("results.db");
  Store store = open_store(path);
  const auto run = require_ok(store.create_run(sample_run()));
  require_ok(store.add_problems(run, {problem(1, 1, "Add"), problem(2, 1, "Mul")}));
  require_ok(store.insert_sample(new_sample(run, 1, 0)));
  require_ok(store.insert_sample(new_sample(run, 2, 0, false)));
  return path;
}

}  // namespace

TEST_CASE("a read-only query returns columns and typed cells") {
  TempDir dir;
  const std::string path = filled_database(dir);
  auto result = require_ok(run_query(path, "SELECT 1 AS i, 2.5 AS r, 'x' AS t, NULL AS n, x'0aff' AS b"));
  CHECK(result.columns == std::vector<std::string>{"i", "r", "t", "n", "b"});
  REQUIRE(result.rows.size() == 1);
  CHECK(std::get<std::int64_t>(result.rows[0][0]) == 1);
  CHECK(std::get<double>(result.rows[0][1]) == 2.5);
  CHECK(std::get<std::string>(result.rows[0][2]) == "x");
  CHECK(std::holds_alternative<std::monostate>(result.rows[0][3]));
  CHECK(std::get<Blob>(result.rows[0][4]).bytes == std::vector<std::uint8_t>{0x0a, 0xff});

  auto counted = require_ok(run_query(path, "select count(*) from samples"));
  CHECK(std::get<std::int64_t>(counted.rows[0][0]) == 2);
  // A trailing semicolon, whitespace or comment is still one statement; so are CTEs.
  CHECK(run_query(path, "select 1;").ok());
  CHECK(run_query(path, "  select 1 ;  \n -- the end\n").ok());
  CHECK(run_query(path, "WITH x AS (SELECT 1 AS v) SELECT v FROM x").ok());
  CHECK(run_query(path, "PRAGMA table_info(runs)").ok());
  CHECK(run_query(path, "SELECT name FROM pragma_table_info('samples')").ok());

  auto bad = run_query(path, "select * from nowhere");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message == path + ": query failed: no such table: nowhere");
  auto empty = run_query(path, "  -- nothing\n");
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.error().message == "query is empty");
}

TEST_CASE("queries that would change anything are refused") {
  TempDir dir;
  const std::string path = filled_database(dir);
  const std::string read_only = "query must be read-only (dicebench query never changes the database)";
  const std::string attached = dir.file("attached.db");
  const std::string vacuumed = dir.file("copy.db");
  const std::vector<std::string> writes = {
      "INSERT INTO runs (created, status, model, suite, config, dicebench_version, git_sha, host, seed, repro) "
      "VALUES ('t','running','m','s','{}','v','g','h',1,'{}')",
      "DELETE FROM samples",
      "UPDATE runs SET model = 'x'",
      "DROP TABLE evaluations",
      "CREATE TABLE t (x INTEGER)",
      "PRAGMA user_version = 5",
      "PRAGMA query_only = 0",
      "PRAGMA journal_mode = DELETE",
      "ATTACH '" + attached + "' AS other",
      "DETACH main",
      "VACUUM INTO '" + vacuumed + "'",
      "REINDEX",
  };
  const std::string before = read_bytes(path);
  for (const std::string& sql : writes) {
    CAPTURE(sql);
    auto result = run_query(path, sql);
    REQUIRE_FALSE(result.ok());
    CHECK(result.error().message == read_only);
  }
  CHECK_FALSE(std::filesystem::exists(attached));
  CHECK_FALSE(std::filesystem::exists(vacuumed));
  CHECK_MESSAGE(read_bytes(path) == before, "the file changed");
  auto count = require_ok(run_query(path, "SELECT count(*), (SELECT model FROM runs) FROM samples"));
  CHECK(std::get<std::int64_t>(count.rows[0][0]) == 2);
  CHECK(std::get<std::string>(count.rows[0][1]) == "replay:/tmp/completions");
}

TEST_CASE("only a single statement is accepted") {
  TempDir dir;
  const std::string path = filled_database(dir);
  for (const std::string sql : {"select 1; select 2", "select 1; delete from samples", "select 1; nonsense here"}) {
    CAPTURE(sql);
    auto result = run_query(path, sql);
    REQUIRE_FALSE(result.ok());
    CHECK(result.error().message == "query must be a single statement");
  }
  CHECK(std::get<std::int64_t>(require_ok(run_query(path, "select count(*) from samples")).rows[0][0]) == 2);
}

TEST_CASE("table output aligns columns, shows NULL, cuts long cells and counts rows") {
  QueryResult result;
  result.columns = {"id", "name", "speedup"};
  result.rows = {{std::int64_t{1}, std::string("Add"), 2.5},
                 {std::int64_t{12}, std::string("Matmul"), std::monostate{}}};
  CHECK(format_table(result) ==
        "id  name    speedup\n"
        "--  ------  -------\n"
        " 1  Add         2.5\n"
        "12  Matmul     NULL\n"
        "(2 rows)\n");

  QueryResult wide;
  wide.columns = {"text"};
  wide.rows = {{std::string("abcdefgh")}, {std::string("two\nlines")}, {std::string("h\xc3\xa9llo")}};
  TableOptions options;
  options.max_cell_width = 5;
  options.null_text = "";
  CHECK(format_table(wide, options) ==
        "text\n"
        "-----\n"
        "abcd\u2026\n"
        "two\\\u2026\n"
        "h\xc3\xa9llo\n"
        "(3 rows)\n");

  QueryResult none;
  none.columns = {"x"};
  CHECK(format_table(none) == "x\n-\n(0 rows)\n");
}

TEST_CASE("CSV output quotes as RFC 4180 says") {
  QueryResult result;
  result.columns = {"a", "b,c"};
  result.rows = {
      {std::string("x\"y"), std::int64_t{1}},
      {std::string("line1\nline2"), std::monostate{}},
      {0.1, std::string("plain")},
      {Blob{{0x01, 0xab}}, std::string(" spaced ")},
  };
  CHECK(format_csv(result) ==
        "a,\"b,c\"\n"
        "\"x\"\"y\",1\n"
        "\"line1\nline2\",\n"
        "0.1,plain\n"
        "01ab, spaced \n");
}

TEST_CASE("JSON output is an array of objects with numbers as numbers") {
  QueryResult result;
  result.columns = {"id", "speedup", "name", "note", "id"};
  result.rows = {
      {std::int64_t{1}, 1.25, std::string("Add"), std::monostate{}, std::int64_t{7}},
      {std::int64_t{2}, 0.5, std::string("q\"uote"), std::string("n"), std::int64_t{8}},
  };
  const std::string text = format_json(result);
  CHECK(text.back() == ']');
  const auto parsed = nlohmann::json::parse(text);
  REQUIRE(parsed.is_array());
  REQUIRE(parsed.size() == 2);
  CHECK(parsed[0]["id"] == 1);
  CHECK(parsed[0]["speedup"].is_number_float());
  CHECK(parsed[0]["speedup"] == 1.25);
  CHECK(parsed[0]["name"] == "Add");
  CHECK(parsed[0]["note"].is_null());
  CHECK(parsed[0]["id:2"] == 7);
  CHECK(parsed[1]["name"] == "q\"uote");
  CHECK(format_json(QueryResult{{"x"}, {}}) == "[]");
}
