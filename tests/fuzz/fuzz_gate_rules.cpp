// Fuzz target: the TOML rules of `dicebench gate`. Rules that parse have a bound or "noise".
#include "results/report/gate_rules.hpp"
#include "tests/fuzz/fuzz_support.hpp"

using namespace dicebench;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto rules = results::parse_gate_rules(fuzz::as_text(data, size), "gate.toml");
  if (!rules) {
    fuzz::check_one_line(rules.error().message);
    return 0;
  }
  for (const auto& rule : rules->rules)
    fuzz::check(rule.noise || rule.max_drop || rule.max_relative_drop, "a rule without a bound: " + rule.metric);
  return 0;
}
