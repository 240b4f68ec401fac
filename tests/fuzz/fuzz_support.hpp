// What every fuzz target shares: the libFuzzer entry point's declaration, a scratch folder for
// parsers that read files, splitting one input into several files, and the checks a target makes
// (a failed check aborts, which libFuzzer and the replay driver both report as a finding).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace dicebench::fuzz {

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// A folder of this process's own, emptied at each call and removed at exit.
const std::filesystem::path& scratch_folder();
// Writes `contents` to scratch_folder()/name and returns the path.
std::filesystem::path write_scratch_file(const std::string& name, std::string_view contents);
// Removes every file of the scratch folder (a file one input wrote must not leak into the next).
void clear_scratch_folder();

// The text before the first NUL byte and the text after it (empty when there is none): one input
// that stands for two files, e.g. config.json and generation_config.json.
std::pair<std::string_view, std::string_view> split_at_nul(std::string_view input);

// Aborts with `what` on stderr unless `condition` holds.
void check(bool condition, std::string_view what);
// The project's rule for bad input: an error is one line. Aborts when `message` is empty or spans
// several lines.
void check_one_line(std::string_view message);

}  // namespace dicebench::fuzz
