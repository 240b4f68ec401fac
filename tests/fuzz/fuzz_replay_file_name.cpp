// Fuzz target: the names of a replay folder's files. A name that parses is the name file_name()
// formats for its sample, or a spelling of the same sample.
#include "models/replay/replay_file_name.hpp"
#include "tests/fuzz/fuzz_support.hpp"

using namespace dicebench;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto parsed = replay::parse_file_name(fuzz::as_text(data, size));
  if (!parsed) return 0;
  const std::string formatted = replay::file_name(parsed->key, parsed->kind);
  const auto again = replay::parse_file_name(formatted);
  fuzz::check(again && again->key == parsed->key && again->kind == parsed->kind,
              "the formatted name " + formatted + " does not parse back to its sample");
  fuzz::check(!replay::describe(parsed->key).empty(), "an empty description");
  return 0;
}
