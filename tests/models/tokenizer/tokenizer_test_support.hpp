// Helpers shared by the tokenizer tests: a temporary folder removed at scope exit, and running
// the Hugging Face reference script (hf_reference.py) once into it.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

namespace dicebench::models::testing {

class TemporaryFolder {
 public:
  TemporaryFolder();
  ~TemporaryFolder();
  TemporaryFolder(const TemporaryFolder&) = delete;
  TemporaryFolder& operator=(const TemporaryFolder&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Runs hf_reference.py on tests/data/tokenizer/cases.json into `out` with `arguments` and
// returns its reference.json; a failed run fails the test with the script's output.
nlohmann::json run_hf_reference(const std::filesystem::path& out, const std::string& arguments);

std::string read_text(const std::filesystem::path& path);
void write_text(const std::filesystem::path& path, const std::string& text);

}  // namespace dicebench::models::testing
