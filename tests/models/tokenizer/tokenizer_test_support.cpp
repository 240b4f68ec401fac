// Helpers shared by the tokenizer tests (see tokenizer_test_support.hpp).
#include "tokenizer_test_support.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace dicebench::models::testing {

TemporaryFolder::TemporaryFolder() {
  std::string pattern = (std::filesystem::temp_directory_path() / "dicebench-tokenizer-XXXXXX").string();
  REQUIRE(mkdtemp(pattern.data()) != nullptr);
  path_ = pattern;
}

TemporaryFolder::~TemporaryFolder() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

nlohmann::json run_hf_reference(const std::filesystem::path& out, const std::string& arguments) {
  const std::string log = (out / "hf_reference.log").string();
  const std::string command = std::string("'") + DICEBENCH_PYTHON + "' -B '" + DICEBENCH_SOURCE_DIR +
                              "/tests/models/tokenizer/hf_reference.py' '" + DICEBENCH_TEST_DATA_DIR +
                              "/tokenizer/cases.json' '" + out.string() + "' " + arguments + " > '" + log + "' 2>&1";
  const int status = std::system(command.c_str());
  INFO("command: ", command);
  INFO("output: ", read_text(log));
  REQUIRE_MESSAGE(status == 0,
                  "hf_reference.py failed (is `tokenizers` installed? pip install -r tools/requirements.txt)");
  return nlohmann::json::parse(read_text(out / "reference.json"));
}

}  // namespace dicebench::models::testing
