// The vocabularies that cross between the C++ host and the Python worker agree with their one
// definition: problem traits (results/flags.hpp against protocol.py's PROBLEM_TRAITS), the protocol
// version (harness/client/worker_process.hpp against protocol.py), and flags spell one way, also
// where a suite plugin reports one.
#include "benchmarks/kernelbench/backend_check.hpp"
#include "harness/client/worker_process.hpp"
#include "results/flags.hpp"

#include <doctest/doctest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace dicebench;

namespace {

std::string protocol_py() {
  std::ifstream in(std::string(DICEBENCH_SOURCE_DIR) + "/harness/python/dicebench_harness/protocol.py");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
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

TEST_CASE("host and worker speak one protocol version") {
  const std::string text = protocol_py();
  std::smatch found;
  REQUIRE(std::regex_search(text, found, std::regex(R"(\nPROTOCOL_VERSION = (\d+))")));
  CHECK(std::stoi(found[1]) == harness::kProtocolVersion);
}

TEST_CASE("borderline margins are those within [0.5, 2]") {
  CHECK(results::is_borderline_margin(0.5));
  CHECK(results::is_borderline_margin(1.3));
  CHECK(results::is_borderline_margin(2.0));
  CHECK_FALSE(results::is_borderline_margin(0.49));
  CHECK_FALSE(results::is_borderline_margin(2.01));
}
