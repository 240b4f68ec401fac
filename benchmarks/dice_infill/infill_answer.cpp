// Assembling an infilling answer into a candidate and measuring the middle against the reference.
#include "benchmarks/dice_infill/infill_answer.hpp"

#include "benchmarks/kernelbench/extract.hpp"
#include "core/base/text.hpp"

namespace dicebench::dice_infill {
namespace {

constexpr std::string_view kWhitespace = " \t\n\r\f\v";  // what trim() removes

// Exact match and edit distance of `middle` against the reference middle, ends' whitespace aside.
InfillAnswer measured(const InfillItem& item, std::string_view middle, std::string candidate) {
  const std::string_view reference = trim(item.middle), answer = trim(middle);
  InfillAnswer out;
  out.candidate = std::move(candidate);
  out.exact_match = answer == reference;
  out.edit_distance = static_cast<std::int64_t>(edit_distance(answer, reference));
  return out;
}

InfillAnswer assemble_middle(const InfillItem& item, std::string_view middle) {
  const std::string_view answer = trim(middle);
  const std::string_view lead = std::string_view(item.middle).substr(0, item.middle.find_first_not_of(kWhitespace));
  const std::size_t last = item.middle.find_last_not_of(kWhitespace);
  const std::string_view trail =
      last == std::string::npos ? std::string_view() : std::string_view(item.middle).substr(last + 1);
  std::string candidate = item.prefix;
  if (!answer.empty()) candidate += std::string(lead) + std::string(answer) + std::string(trail);
  return measured(item, middle, candidate + item.suffix);
}

}  // namespace

InfillAnswer assemble_answer(const InfillItem& item, std::string_view completion) {
  const auto middle = kernelbench::extract_candidate(completion, kernelbench::Which::First);
  if (!middle) {
    InfillAnswer none;
    none.edit_distance = static_cast<std::int64_t>(trim(item.middle).size());
    return none;
  }
  return assemble_middle(item, *middle);
}

InfillAnswer assemble_span(const InfillItem& item, std::string_view span) {
  return measured(item, span, item.prefix + std::string(span) + item.suffix);
}

}  // namespace dicebench::dice_infill
