// Every shape of the evaluation record holds exactly the fields of its one definition
// (results/evaluation_fields.hpp): `dicebench eval --json`, the evaluations table's columns, what the
// evaluation stage stores (columns and details JSON) and the worker's reply fields (protocol.py); the
// Python module's Evaluation is checked in tests/python/test_package.py. A field added to one shape
// and not to the table fails here.
#include "tests/results/test_support.hpp"
#include "core/run/evaluation_row.hpp"
#include "harness/client/evaluation_json.hpp"
#include "results/evaluation_fields.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sqlite3.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

using namespace dicebench;
using results::FieldType;
using results::kEvaluationFields;

namespace {

std::string source_file(const std::string& relative) {
  std::ifstream in(std::string(DICEBENCH_SOURCE_DIR) + "/" + relative);
  REQUIRE_MESSAGE(in.good(), relative);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// An evaluation with every member set (consistent enough for the store: correct and compiled).
harness::Evaluation full_evaluation() {
  harness::Evaluation e;
  e.status = results::Verdict::correct;
  e.compiled = e.correct = true;
  e.runtime = harness::Timing{1.0, 1.1, 0.1, 0.9, 1.3, 0.95, 1.2, 20};
  e.baseline = harness::Timing{2.0, 2.1, 0.2, 1.9, 2.3, 1.95, 2.2, 30};
  e.speedup = 2.0;
  e.speedup_mean = 1.9;
  e.max_abs_diff = 1e-6;
  e.mean_abs_diff = 1e-7;
  e.failed_trial = 1;
  e.failed_call = 2;
  e.failed_stage = "timing";
  e.error_class = "output_mismatch";
  e.error_message = "what went wrong";
  e.margin = 0.5;
  e.input_bytes = 1024;
  e.output_bytes = 512;
  e.memory_floor_ms = 0.01;
  e.flags = {{results::kAllEvaluationFlags.front(), "what it saw"}};
  e.runtime->stop_reason = "converged";
  e.runtime->warm_calls = 20;
  e.baseline->stop_reason = "budget";
  e.timed_calls = 20;
  e.checked_calls = 3;
  e.timed_batches = 1;
  e.problem_traits = harness::ProblemTraits{nlohmann::json::array({"zeros_pass"}), nlohmann::json::object()};
  e.fastpath_outcome = nlohmann::json{{"verdict", "crashed"}};
  e.baseline_measured = true;
  e.compile = harness::CompileInfo{"nvrtc", "every call", "the log", 1.5, nlohmann::json::array({{{"name", "ext"}}}),
                                   {{"count", 1}, {"seconds", 0.3}, {"compiles", nlohmann::json::array()}}};
  harness::DeviceProfile profile;
  profile.busy_ms = 0.8;
  profile.host_ms = 1.0;
  profile.call_host_ms = 0.2;
  profile.launch_latency_ms = 0.01;
  profile.span_ms = 0.9;
  profile.candidate_share = 0.75;
  profile.kernels = {{"relu_kernel", "kernel", true, 1.0, 0.5, "1,1,1", "256,1,1"}};
  e.profile = profile;
  e.log_tail = "printed";
  e.seconds = 3.0;
  e.latency_seconds = 4.0;
  e.phases = {{"trials", 0.5}};
  e.toolchain = nlohmann::json{{"builds", 1}, {"cache_hits", 0}, {"failures", 0}, {"queued_seconds", 0.1}, {"build_seconds", 30.0}};
  return e;
}

// The table's names in one shape (`select` picks it), those starting with `prefix`, without it.
template <class Select>
std::set<std::string> table_paths(Select select, const std::string& prefix = "") {
  std::set<std::string> paths;
  for (const auto& field : kEvaluationFields) {
    const std::string path(select(field));
    if (!path.empty() && path.rfind(prefix, 0) == 0) paths.insert(path.substr(prefix.size()));
  }
  return paths;
}

// `object`'s keys are exactly the dotted `paths`: a key that paths name as "key.child" is an
// object holding exactly those children.
void check_keys(const nlohmann::json& object, const std::set<std::string>& paths, const std::string& where) {
  REQUIRE_MESSAGE(object.is_object(), where);
  std::set<std::string> expected;
  std::map<std::string, std::set<std::string>> children;
  for (const auto& path : paths) {
    const auto dot = path.find('.');
    expected.insert(path.substr(0, dot));
    if (dot != std::string::npos) children[path.substr(0, dot)].insert(path.substr(dot + 1));
  }
  std::set<std::string> actual;
  for (const auto& [key, value] : object.items()) actual.insert(key);
  CHECK_MESSAGE(actual == expected, fmt::format("{} holds {}, the table (results/evaluation_fields.hpp) names {}", where,
                                                actual, expected));
  for (const auto& [key, sub] : children)
    if (object.contains(key)) check_keys(object.at(key), sub, where + "." + key);
}

bool json_has_type(const nlohmann::json& value, FieldType type) {
  switch (type) {
    case FieldType::verdict:
    case FieldType::text: return value.is_string();
    case FieldType::boolean: return value.is_boolean();
    case FieldType::integer: return value.is_number_integer();
    case FieldType::real: return value.is_number();
    case FieldType::object: return value.is_object();
    case FieldType::array: return value.is_array();
  }
  return false;
}

std::string sql_type(FieldType type) {
  switch (type) {
    case FieldType::boolean:
    case FieldType::integer: return "INTEGER";
    case FieldType::real: return "REAL";
    default: return "TEXT";
  }
}

std::string pointer_of(std::string_view dotted) {
  std::string pointer = "/" + std::string(dotted);
  std::replace(pointer.begin(), pointer.end(), '.', '/');
  return pointer;
}

// The quoted keys ("key": ...) of protocol.py's Spec of type `spec`.
std::set<std::string> protocol_spec_keys(const std::string& protocol, const std::string& spec) {
  std::smatch found;
  const std::regex block("Spec\\(\"" + std::regex_replace(spec, std::regex(R"(\.)"), R"(\.)") +
                         R"(", None, \{([^}]*)\})");
  if (!std::regex_search(protocol, found, block)) return {};
  const std::string body = found[1];
  std::set<std::string> keys;
  const std::regex key(R"re("(\w+)":)re");
  for (auto it = std::sregex_iterator(body.begin(), body.end(), key); it != std::sregex_iterator(); ++it)
    keys.insert((*it)[1]);
  return keys;
}

}  // namespace

TEST_CASE("every field of the table has a name in some shape, a type and a meaning") {
  std::set<std::string> seen;
  for (const auto& field : kEvaluationFields) {
    CHECK(!(field.json.empty() && field.stored.empty() && field.python.empty()));
    CHECK(!field.meaning.empty());
    const std::string name = fmt::format("{}|{}|{}", field.json, field.stored, field.python);
    CHECK_MESSAGE(seen.insert(name).second, name);
  }
}

TEST_CASE("dicebench eval --json holds exactly the table's fields, of their types") {
  const nlohmann::json out = harness::evaluation_json(full_evaluation(), "cuda");
  check_keys(out, table_paths([](const auto& f) { return f.json; }), "eval --json");
  for (const auto& field : kEvaluationFields) {
    if (field.json.empty()) continue;
    const nlohmann::json::json_pointer pointer(pointer_of(field.json));
    REQUIRE_MESSAGE(out.contains(pointer), field.json);
    CHECK_MESSAGE(json_has_type(out.at(pointer), field.type), fmt::format("{}: {}", field.json, out.at(pointer).dump()));
  }
  CHECK(out["verdict"] == "correct");
}

TEST_CASE("the evaluations table's columns are the table's, of their SQL types") {
  results::testing::TempDir dir;
  const std::string path = dir.file("results.db");
  results::testing::open_store(path);
  results::Database db = results::testing::raw_open(path);
  auto stmt = db.prepare("SELECT name, type FROM pragma_table_info('evaluations')", "test");
  REQUIRE(stmt.ok());
  std::map<std::string, std::string> columns;
  for (;;) {
    auto row = stmt->step("test");
    REQUIRE(row.ok());
    if (!*row) break;
    columns[stmt->column_text(0)] = stmt->column_text(1);
  }
  std::map<std::string, std::string> expected;
  for (const auto& field : kEvaluationFields) {
    const std::string stored(field.stored);
    if (stored.rfind("evaluations.", 0) == 0 && stored.find('.', 12) == std::string::npos)
      expected[stored.substr(12)] = sql_type(field.type);
  }
  CHECK(columns == expected);
  // The fields other tables hold.
  for (const auto& field : kEvaluationFields) {
    const std::string stored(field.stored);
    if (stored.empty() || stored.rfind("evaluations.", 0) == 0) continue;
    const auto dot = stored.find('.');
    const std::string table = stored.substr(0, dot);
    const std::string sql = dot == std::string::npos
                                ? fmt::format("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '{}'", table)
                                : fmt::format("SELECT count(*) FROM pragma_table_info('{}') WHERE name = '{}'", table,
                                              stored.substr(dot + 1));
    CHECK_MESSAGE(results::testing::raw_int(db, sql) == 1, stored);
  }
}

TEST_CASE("a stored evaluation fills every column, details key and table of its fields") {
  results::testing::TempDir dir;
  const std::string path = dir.file("results.db");
  auto store = results::testing::open_store(path);
  const auto run = results::testing::require_ok(store.create_run(results::testing::sample_run()));
  results::testing::require_ok(store.add_problems(run, {results::testing::problem(1, 1, "Relu")}));
  const auto sample = results::testing::require_ok(store.insert_sample(results::testing::new_sample(run, 1, 0)));
  const results::NewEvaluation row = run::evaluation_row(sample, full_evaluation(), "cuda");

  check_keys(nlohmann::json::parse(row.details_json),
             table_paths([](const auto& f) { return f.stored; }, "evaluations.details."), "evaluations.details");
  results::testing::require_ok(store.insert_evaluation(row));

  results::Database db = results::testing::raw_open(path);
  auto stmt = db.prepare(fmt::format("SELECT * FROM evaluations WHERE sample = {}", sample), "test");
  REQUIRE(stmt.ok());
  REQUIRE(*stmt->step("test"));
  for (int column = 0; column < stmt->column_count(); ++column)
    CHECK_MESSAGE(!stmt->is_null(column), fmt::format("evaluations.{} is NULL", sqlite3_column_name(stmt->get(), column)));
  CHECK(results::testing::raw_int(db, "SELECT count(*) FROM evaluation_flags") == 1);
  CHECK(results::testing::raw_int(db, "SELECT count(*) FROM evaluation_kernels") == 1);
}

TEST_CASE("the worker reply fields the table names are protocol.py's, and no profile or compile field is dropped") {
  const std::string protocol = source_file("harness/worker/python/dicebench_harness/protocol.py");
  std::map<std::string, std::set<std::string>> named;  // by Spec type
  for (const auto& field : kEvaluationFields) {
    if (field.worker.empty()) continue;
    const std::string worker(field.worker);
    const auto dot = worker.rfind('.');
    REQUIRE(dot != std::string::npos);
    const std::string spec = worker.substr(0, dot), key = worker.substr(dot + 1);
    named[spec].insert(key);
    CHECK_MESSAGE(protocol_spec_keys(protocol, spec).count(key) == 1, (worker + " is not a field of protocol.py"));
  }
  // Every field of these nested replies is carried into the record.
  for (const std::string spec : {"profile", "compile"}) {
    CHECK(!protocol_spec_keys(protocol, spec).empty());
    CHECK_MESSAGE(protocol_spec_keys(protocol, spec) == named[spec], spec);
  }
}
