// The vocabularies that cross between the C++ host, the Python worker, SQL, suite plugins and the
// docs agree with their one definition: verdicts (results/verdict.hpp against the evaluations.status
// CHECK and protocol.py's VERDICTS and CANDIDATE_ERROR_CLASSES), problem traits (results/flags.hpp
// against protocol.py's PROBLEM_TRAITS), tolerance modes (harness/client/evaluator.hpp against
// protocol.py's TOLERANCE_MODES), the protocol version (harness/client/worker_process.hpp against
// protocol.py and harness/PROTOCOL.md), the flag the KernelBench suite's review reports, the [eval]
// keys (core/host/evaluation_settings.hpp against what it reads and core/host/README.md), and flags
// and verdicts spell one way.
#include "benchmarks/kernelbench/backend_check.hpp"
#include "core/host/evaluation_settings.hpp"
#include "harness/client/evaluator.hpp"
#include "harness/client/worker_process.hpp"
#include "results/flags.hpp"
#include "results/sqlite_handle.hpp"
#include "results/store.hpp"
#include "results/verdict.hpp"

#include <doctest/doctest.h>
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

std::string protocol_py() { return source_file("harness/worker/python/dicebench_harness/protocol.py"); }

template <class Range>
std::vector<std::string> verdict_names(const Range& verdicts) {
  std::vector<std::string> names;
  for (const auto verdict : verdicts) names.emplace_back(results::verdict_name(verdict));
  return names;
}

// The quoted names of a Python tuple assignment `NAME = ("a", "b", ...)` in protocol.py.
std::vector<std::string> python_tuple(const std::string& name) {
  const std::string text = protocol_py();
  std::smatch found;
  REQUIRE(std::regex_search(text, found, std::regex("\n" + name + R"( = \(([^)]*)\))")));
  std::vector<std::string> names;
  const std::string body = found[1];
  const std::regex quoted(R"re("([^"]*)")re");
  for (auto it = std::sregex_iterator(body.begin(), body.end(), quoted); it != std::sregex_iterator(); ++it)
    names.push_back((*it)[1]);
  return names;
}

}  // namespace

TEST_CASE("every flag has one spelling and a description") {
  for (const auto flag : results::kAllEvaluationFlags) {
    CHECK(results::parse_flag(results::flag_name(flag)) == flag);
    CHECK(!results::flag_description(flag).empty());
  }
  CHECK_FALSE(results::parse_flag("borderlin").has_value());
}

TEST_CASE("the flag the KernelBench suite's review reports is an evaluation flag") {
  CHECK(results::parse_flag(kernelbench::kBackendUnusedFlag) == results::EvaluationFlag::backend_unused);
}

TEST_CASE("the worker's problem traits are the vocabulary's, in its order") {
  std::vector<std::string> vocabulary;
  for (const auto trait : results::kAllProblemTraits) {
    vocabulary.emplace_back(results::trait_name(trait));
    CHECK(results::parse_trait(results::trait_name(trait)) == trait);
  }
  CHECK(python_tuple("PROBLEM_TRAITS") == vocabulary);
}

TEST_CASE("the worker's tolerance modes are the host's, in its order (the first is the default)") {
  const std::vector<std::string> host(harness::kToleranceModes.begin(), harness::kToleranceModes.end());
  CHECK(python_tuple("TOLERANCE_MODES") == host);
  CHECK(harness::kDefaultToleranceMode == harness::kToleranceModes[0]);
  CHECK(harness::EvaluationSettings{}.tolerance == harness::kDefaultToleranceMode);
}

TEST_CASE("the worker's model modes are the host's, in its order (the first is the default)") {
  const std::vector<std::string> host(harness::kModelModes.begin(), harness::kModelModes.end());
  CHECK(python_tuple("MODEL_MODES") == host);
  CHECK(harness::kDefaultModelMode == harness::kModelModes[0]);
  CHECK(harness::EvaluationSettings{}.model_mode == harness::kDefaultModelMode);
  // protocol.py's defaults for the requests that carry a model mode are its first.
  const std::string text = protocol_py();
  CHECK(text.find(R"("model_mode": (one_of(*MODEL_MODES), MODEL_MODES[0]))") != std::string::npos);
  CHECK(text.find(R"("model_mode": (one_of(*MODEL_MODES), "eval"))") == std::string::npos);
}

TEST_CASE("host, worker and PROTOCOL.md speak one protocol version") {
  const std::string text = protocol_py();
  std::smatch found;
  REQUIRE(std::regex_search(text, found, std::regex(R"(\nPROTOCOL_VERSION = (\d+))")));
  CHECK(std::stoi(found[1]) == harness::kProtocolVersion);
  const std::string doc = source_file("harness/PROTOCOL.md");
  REQUIRE(std::regex_search(doc, found, std::regex(R"(^# dicebench worker protocol, version (\d+)\n)")));
  CHECK(std::stoi(found[1]) == harness::kProtocolVersion);
}

TEST_CASE("every verdict has one spelling") {
  std::set<std::string> names;
  for (const auto verdict : results::kAllVerdicts) {
    CHECK(results::parse_verdict(results::verdict_name(verdict)) == verdict);
    names.emplace(results::verdict_name(verdict));
  }
  CHECK(names.size() == results::kAllVerdicts.size());
  CHECK_FALSE(results::parse_verdict("almost_correct").has_value());
  CHECK_FALSE(results::parse_verdict("").has_value());
}

TEST_CASE("the worker's verdicts and candidate error classes are the vocabulary's") {
  CHECK(python_tuple("VERDICTS") == verdict_names(results::kComparisonVerdicts));
  std::vector<std::string> classes{""};  // an ok reply's
  for (const auto& name : verdict_names(results::kCandidateFailureVerdicts)) classes.push_back(name);
  CHECK(python_tuple("CANDIDATE_ERROR_CLASSES") == classes);
}

TEST_CASE("the database's CHECK on evaluations.status allows exactly the verdicts") {
  // SQLite cannot change a CHECK in place: a verdict added to the enum needs a migration step that
  // rebuilds the evaluations table (results/schema.cpp); this fails until it has one.
  std::string pattern = (std::filesystem::temp_directory_path() / "dicebench-vocabulary-XXXXXX").string();
  REQUIRE(::mkdtemp(pattern.data()) != nullptr);
  const std::string path = pattern + "/results.db";
  {
    auto store = results::Store::open(path);
    REQUIRE_MESSAGE(store.ok(), (store.ok() ? "" : store.error().message));
  }
  auto db = results::Database::open_read_only(path);
  REQUIRE(db.ok());
  auto stmt = db->prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'evaluations'", "test");
  REQUIRE(stmt.ok());
  REQUIRE(*stmt->step("test"));
  const std::string sql = stmt->column_text(0);
  std::smatch found;
  REQUIRE(std::regex_search(sql, found, std::regex(R"(status TEXT NOT NULL CHECK \(status IN \(([^)]*)\)\))")));
  std::vector<std::string> allowed;
  const std::string list = found[1];
  const std::regex quoted("'([^']*)'");
  for (auto it = std::sregex_iterator(list.begin(), list.end(), quoted); it != std::sregex_iterator(); ++it)
    allowed.push_back((*it)[1]);
  CHECK(allowed == verdict_names(results::kAllVerdicts));
  std::filesystem::remove_all(pattern);
}

TEST_CASE("borderline margins are those within [0.5, 2]") {
  CHECK(results::is_borderline_margin(0.5));
  CHECK(results::is_borderline_margin(1.3));
  CHECK(results::is_borderline_margin(2.0));
  CHECK_FALSE(results::is_borderline_margin(0.49));
  CHECK_FALSE(results::is_borderline_margin(2.01));
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
