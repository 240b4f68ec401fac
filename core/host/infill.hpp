// A problem as one span of text to fill (ABI 1.4's dicebench_infill): what a suite offers and a
// model that fills spans natively takes, and how a run records it as the problem's prompt.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace dicebench::host {

// The setting `infill`: how a run shows a suite that offers spans to its model. native: as the span
// to fill (the model must fill spans natively); chat: as the suite's prompt; auto: native where the
// model can, else chat.
inline constexpr std::array<std::string_view, 3> kInfillModes = {"auto", "native", "chat"};
inline constexpr std::string_view kDefaultInfillMode = kInfillModes[0];

struct Infill {
  std::string before, after;
  uint64_t reference_span_bytes = 0;  // the length of the suite's own answer (never the answer)
};

// The prompt a run stores (and hashes) for a problem it fills natively: what the model saw.
inline std::string infill_prompt_record(const Infill& infill) {
  return nlohmann::ordered_json{
      {"infill",
       {{"before", infill.before}, {"after", infill.after}, {"reference_span_bytes", infill.reference_span_bytes}}}}
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace dicebench::host
