// Assembling an infilling answer into a candidate and measuring the middle against the reference.
#include "benchmarks/dice_infill/infill_answer.hpp"

#include "benchmarks/kernelbench/extract.hpp"
#include "core/base/text.hpp"

namespace dicebench::dice_infill {
namespace {

constexpr std::string_view kWhitespace = " \t\n\r\f\v";  // what trim() removes

InfillAnswer assemble_middle(const InfillItem& item, std::string_view middle) {
  const std::string_view reference = trim(item.middle);
  const std::string_view answer = trim(middle);
  const std::string_view lead = std::string_view(item.middle).substr(0, item.middle.find_first_not_of(kWhitespace));
  const std::size_t last = item.middle.find_last_not_of(kWhitespace);
  const std::string_view trail = last == std::string::npos ? std::string_view() : std::string_view(item.middle).substr(last + 1);
  InfillAnswer out;
  out.candidate = item.prefix;
  if (!answer.empty()) *out.candidate += std::string(lead) + std::string(answer) + std::string(trail);
  *out.candidate += item.suffix;
  out.exact_match = answer == reference;
  out.edit_distance = static_cast<std::int64_t>(edit_distance(answer, reference));
  return out;
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

}  // namespace dicebench::dice_infill
