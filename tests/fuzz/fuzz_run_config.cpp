// Fuzz target: a TOML run configuration (the file `dicebench run --config` reads) and --set
// assignments made from its lines.
#include "core/host/config.hpp"
#include "tests/fuzz/fuzz_support.hpp"

using namespace dicebench;
using dicebench::host::Config;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  auto config = Config::from_toml_string(text, "fuzz.toml");
  if (!config) {
    fuzz::check_one_line(config.error().message);
    return 0;
  }
  for (const auto& [key, value] : config->values())
    fuzz::check(config->get(key) == value, "a key that does not read back: " + key);
  const std::string first_line(text.substr(0, text.find('\n')));
  if (auto assigned = config->assign(first_line); !assigned) fuzz::check_one_line(assigned.error().message);
  return 0;
}
