// Integration tests of the dice-infill suite through `dicebench run` on the CPU, over the project's
// own items (tests/data/dice_infill): replay folders made by tools/perf/dice_infill_replay.py
// (the GPU check's script) of the reference middles (every candidate correct, every middle an exact
// match) and of empty middles (none correct); the infill fields in SQLite, `report` and `show`; a
// malformed items file ending in one error line with nothing stored; and the run's infill mode
// (chat for a model that fills no span natively; native asked of one is one error line).
#include "cli_runner.hpp"
#include "tests/test_files.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <string>

using namespace dicebench;
using test::check_one_error_line;
using test::run_cli;
using test::scalar;

namespace {

const std::string kItems = std::string(DICEBENCH_TEST_DATA_DIR) + "/dice_infill/items.json";

void make_replays(const test::TempDir& tmp) {
  const std::string command = std::string(DICEBENCH_PYTHON) + " " + DICEBENCH_SOURCE_DIR +
                              "/tools/perf/dice_infill_replay.py " + kItems + " " + tmp / "replay" + " >/dev/null";
  REQUIRE(std::system(command.c_str()) == 0);
}

nlohmann::json report_json(const std::string& db, const std::string& run) {
  const auto r = run_cli({"report", run, "--db", db, "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("dice-infill: reference middles are all correct and exact, empty middles none") {
  test::TempDir tmp("dice-infill-cli");
  make_replays(tmp);
  const std::string db = tmp / "results.db";
  for (const std::string name : {"reference", "empty"}) {
    const auto r =
        run_cli({"run", "--model", "replay:" + tmp / ("replay/" + name), "--suite", "dice-infill", "--dice-infill-data",
                 kItems, "--device", "cpu", "--db", db, "--set", "eval.timing_budget_s=1"});
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  }
  CHECK(scalar(db, "select count(*) from problems where run = 1") == "2");
  CHECK(
      scalar(
          db,
          "select group_concat(problem_id) from (select problem_id from problems where run = 1 order by problem_id)") ==
      "101,202");
  CHECK(scalar(db, "select count(*) from sample_results where run = 1 and verdict = 'correct'") == "2");
  CHECK(scalar(db,
               "select count(*) from samples where run = 1 and "
               "json_extract(extraction_details, '$.infill_exact_match') = 1 and "
               "json_extract(extraction_details, '$.infill_edit_distance') = 0") == "2");
  // The candidate is the item's cuda_code, rebuilt from prefix + the answer + suffix.
  const auto items = nlohmann::json::parse(test::read_text(kItems));
  for (const auto& item : items)
    CHECK(scalar(db, "select candidate from samples where run = 1 and problem_id = " +
                         std::to_string(item["id"].get<int>())) == item["cuda_code"].get<std::string>());
  CHECK(scalar(db, "select count(*) from sample_results where run = 2 and verdict = 'correct'") == "0");
  CHECK(scalar(db, "select sum(json_extract(extraction_details, '$.infill_exact_match')) from samples where run = 2") ==
        "0");

  const nlohmann::json reference = report_json(db, "1");
  CHECK(reference["total"]["correct"] == 2);
  CHECK(reference["total"]["infill"]["exact_match"] == 2);
  CHECK(reference["total"]["infill"]["mean_edit_distance"] == 0.0);
  const nlohmann::json empty = report_json(db, "2");
  CHECK(empty["total"]["correct"] == 0);
  CHECK(empty["total"]["infill"]["exact_match"] == 0);
  // The trimmed middles' lengths: 71 and 41 bytes.
  std::int64_t lengths = 0;
  for (const auto& item : items) lengths += static_cast<std::int64_t>(trim(item["middle"].get<std::string>()).size());
  CHECK(empty["total"]["infill"]["mean_edit_distance"] == doctest::Approx(static_cast<double>(lengths) / 2));

  const auto table = run_cli({"report", "1", "--db", db});
  REQUIRE_MESSAGE(table.exit_code == 0, table.err);
  CHECK(table.out.find("infill: middle exact match 2 of 2 samples (100.0%), mean edit distance 0.0 bytes") !=
        std::string::npos);
  const auto show = run_cli({"show", "2", "--db", db});
  REQUIRE_MESSAGE(show.exit_code == 0, show.err);
  CHECK(show.out.find("exact") != std::string::npos);
}

TEST_CASE("dice-infill: a malformed items file is one error line, and nothing is stored") {
  test::TempDir tmp("dice-infill-bad");
  make_replays(tmp);
  auto items = nlohmann::json::parse(test::read_text(kItems));
  items[1]["middle"] = "    pass\n";
  test::write(tmp / "bad.json", items.dump());
  const std::string db = tmp / "results.db";
  check_one_error_line(run_cli({"run", "--model", "replay:" + tmp / "replay/reference", "--suite", "dice-infill",
                                "--dice-infill-data", tmp / "bad.json", "--device", "cpu", "--db", db}),
                       "item 1 (id 101): prefix + middle + suffix is not cuda_code");
  if (std::filesystem::exists(db)) CHECK(scalar(db, "select count(*) from runs") == "0");
  check_one_error_line(
      run_cli({"run", "--model", "replay:" + tmp / "replay/reference", "--suite", "dice-infill", "--db", db}),
      "dice-infill needs its items: --dice-infill-data PATH");
}

TEST_CASE("dice-infill: a model that fills no span natively is prompted and infill=native is refused") {
  test::TempDir tmp("dice-infill-mode");
  make_replays(tmp);
  const std::string db = tmp / "results.db";
  const std::vector<std::string> base = {"run",     "--model",         "replay:" + tmp / "replay/reference",
                                         "--suite", "dice-infill",     "--dice-infill-data",
                                         kItems,    "--generate-only", "--db",
                                         db};
  const auto r = run_cli(base);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(scalar(db, "select json_extract(config, '$.settings.infill') from runs where id = 1") == "chat");
  auto native = base;
  native.insert(native.end(), {"--infill", "native"});
  check_one_error_line(run_cli(native),
                       "infill=native: model replay:" + tmp / "replay/reference" + " does not fill spans natively");
  auto bogus = base;
  bogus.insert(bogus.end(), {"--set", "infill=sometimes"});
  check_one_error_line(run_cli(bogus), "infill: 'sometimes' is none of auto, native, chat");
  CHECK(scalar(db, "select count(*) from runs") == "1");
  CHECK(scalar(db, "select count(*) from samples") == "2");
}
