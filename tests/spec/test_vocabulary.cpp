// The vocabularies (core/spec/vocabulary.toml) as C++ and SQL see them: one spelling each, the
// flag the KernelBench suite's review reports among them, the database's CHECK on verdicts, the
// protocol version PROTOCOL.md documents, the borderline range, and the [eval] keys one list (what
// evaluation_settings reads, and what core/host/README.md shows). The worker's Python reads the same
// generated lists (dicebench_spec); its tests speak the protocol the host's generated requests do.
#include "benchmarks/kernelbench/backend_check.hpp"
#include "core/host/evaluation_settings.hpp"
#include "core/spec/evaluation.hpp"
#include "core/spec/protocol.hpp"
#include "results/store/sqlite_handle.hpp"
#include "results/store/store.hpp"
#include "tests/results/test_support.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace dicebench;

namespace {

std::string source_file(const std::string& relative) {
  std::ifstream in(std::string(DICEBENCH_SOURCE_DIR) + "/" + relative);
  REQUIRE_MESSAGE(in.good(), relative);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("every flag has one spelling and a description") {
  for (const auto flag : kAllEvaluationFlags) {
    CHECK(parse_flag(flag_name(flag)) == flag);
    CHECK(!flag_description(flag).empty());
  }
  CHECK_FALSE(parse_flag("borderlin").has_value());
}

TEST_CASE("the flag the KernelBench suite's review reports is an evaluation flag") {
  CHECK(parse_flag(kernelbench::kBackendUnusedFlag) == EvaluationFlag::backend_unused);
}

TEST_CASE("PROTOCOL.md documents the protocol version the spec gives") {
  const std::string doc = source_file("harness/PROTOCOL.md");
  CHECK(doc.rfind(fmt::format("# dicebench worker protocol, version {}\n", protocol::kVersion), 0) == 0);
}

TEST_CASE("every problem trait has one spelling, and the defaults of settings are the vocabularies' first") {
  for (const auto trait : kAllProblemTraits) CHECK(parse_trait(trait_name(trait)) == trait);
  CHECK(harness::EvaluationSettings{}.tolerance == kAllToleranceModes[0]);
  CHECK(harness::EvaluationSettings{}.model_mode == kAllModelModes[0]);
  CHECK(harness::EvaluationSettings{}.baseline_method == kAllBaselineMethods[0]);
  CHECK(tolerance_mode_name(ToleranceMode::per_dtype) == "per_dtype");
}

TEST_CASE("every verdict has one spelling") {
  std::set<std::string> names;
  for (const auto verdict : kAllVerdicts) {
    CHECK(parse_verdict(verdict_name(verdict)) == verdict);
    names.emplace(verdict_name(verdict));
  }
  CHECK(names.size() == kAllVerdicts.size());
  CHECK_FALSE(parse_verdict("almost_correct").has_value());
  CHECK_FALSE(parse_verdict("").has_value());
}

TEST_CASE("the database's CHECK on evaluations.status allows exactly the verdicts") {
  // SQLite cannot change a CHECK in place, and core/spec/evaluation.toml spells the list as version
  // 1 made it: a verdict added to the vocabulary needs a migration step that rebuilds the
  // evaluations table (results/store/schema.cpp); this fails until it has one.
  results::testing::TempDir dir;
  const std::string path = dir.file("results.db");
  {
    results::Store store = results::testing::open_store(path);
    const auto run = results::testing::require_ok(store.create_run(results::testing::sample_run()));
    results::testing::require_ok(store.add_problems(run, {results::testing::problem(1, 1, "Add")}));
    results::testing::require_ok(store.insert_sample(results::testing::new_sample(run, 1, 0)));
  }
  results::Database db = results::testing::raw_open(path);
  const auto stored = [&](const std::string& status) {
    const std::string sql =
        "INSERT INTO evaluations (sample, status, compiled, correct, device, created) "
        "SELECT id, '" +
        status + "', 0, 0, 'cpu', 'now' FROM samples";
    const bool ok = db.exec(sql, "test").ok();
    if (ok) REQUIRE(db.exec("DELETE FROM evaluations", "test").ok());
    return ok;
  };
  for (const Verdict verdict : kAllVerdicts)
    CHECK_MESSAGE(stored(std::string(verdict_name(verdict))), verdict_name(verdict));
  CHECK_FALSE(stored("almost_correct"));
  CHECK_FALSE(stored(""));
}

TEST_CASE("borderline margins are those within [0.5, 2]") {
  CHECK(is_borderline_margin(0.5));
  CHECK(is_borderline_margin(1.3));
  CHECK(is_borderline_margin(2.0));
  CHECK_FALSE(is_borderline_margin(0.49));
  CHECK_FALSE(is_borderline_margin(2.01));
}

TEST_CASE("the [eval] keys are one list: what evaluation_settings reads, and what the README's [eval] section shows") {
  std::set<std::string> listed;
  for (const auto& key : host::kEvalKeys) listed.insert(std::string(key));
  CHECK(listed.size() == std::size(host::kEvalKeys));  // none twice
  const std::string source = source_file("core/host/evaluation_settings.cpp");
  std::set<std::string> read;
  const std::regex literal("\"(eval\\.[a-z_0-9]+)\"");
  for (auto it = std::sregex_iterator(source.begin(), source.end(), literal); it != std::sregex_iterator(); ++it)
    read.insert((*it)[1]);
  CHECK(read == listed);
  const std::string readme = source_file("core/host/README.md");  // the [eval] section's reference
  const size_t section = readme.find("\n[eval]\n");
  REQUIRE(section != std::string::npos);
  const std::string block = readme.substr(section, readme.find("```", section) - section);
  for (const auto& key : listed) {
    const std::string name = key.substr(std::string("eval.").size());
    CHECK_MESSAGE(std::regex_search(block, std::regex("\n(# )?" + name + " = ")), key);
  }
}
