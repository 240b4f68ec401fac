// Spelling and meaning of evaluation flags and problem traits (results/flags.hpp).
#include "results/flags.hpp"

namespace dicebench::results {

std::string_view flag_name(EvaluationFlag flag) {
  switch (flag) {
    case EvaluationFlag::output_aliases_input: return "output_aliases_input";
    case EvaluationFlag::below_memory_floor: return "below_memory_floor";
    case EvaluationFlag::excessive_speedup: return "excessive_speedup";
    case EvaluationFlag::borderline: return "borderline";
    case EvaluationFlag::fastpath_disagreement: return "fastpath_disagreement";
    case EvaluationFlag::backend_unused: return "backend_unused";
  }
  return "unknown";
}

std::optional<EvaluationFlag> parse_flag(std::string_view name) {
  for (EvaluationFlag flag : kAllEvaluationFlags)
    if (flag_name(flag) == name) return flag;
  return std::nullopt;
}

std::string_view flag_description(EvaluationFlag flag) {
  switch (flag) {
    case EvaluationFlag::output_aliases_input: return "an output shares storage with an input";
    case EvaluationFlag::below_memory_floor:
      return "faster than moving its inputs and outputs at the GPU's measured bandwidth; not counted as fast";
    case EvaluationFlag::excessive_speedup: return "speedup above eval.speedup_bound (informative)";
    case EvaluationFlag::borderline: return "margin within [0.5, 2]: new inputs may flip the verdict";
    case EvaluationFlag::fastpath_disagreement:
      return "the NVRTC fast path and torch's toolchain disagree; the toolchain's verdict is stored";
    case EvaluationFlag::backend_unused:
      return "its source does not use the kernel language the prompt asked for (read before it ran)";
  }
  return "";
}

std::string_view trait_name(ProblemTrait trait) {
  switch (trait) {
    case ProblemTrait::constant_output: return "constant_output";
    case ProblemTrait::zeros_pass: return "zeros_pass";
    case ProblemTrait::output_equals_input: return "output_equals_input";
    case ProblemTrait::near_constant_output: return "near_constant_output";
  }
  return "unknown";
}

std::optional<ProblemTrait> parse_trait(std::string_view name) {
  for (ProblemTrait trait : kAllProblemTraits)
    if (trait_name(trait) == name) return trait;
  return std::nullopt;
}

std::string_view trait_description(ProblemTrait trait) {
  switch (trait) {
    case ProblemTrait::constant_output: return "one draw's output passes for every other input";
    case ProblemTrait::zeros_pass: return "an all-zero output passes the tolerance";
    case ProblemTrait::output_equals_input: return "returning an input passes the tolerance";
    case ProblemTrait::near_constant_output: return "every element equal to the output's mean passes the tolerance";
  }
  return "";
}

bool is_borderline_margin(double margin) { return margin >= kBorderlineLow && margin <= kBorderlineHigh; }

}  // namespace dicebench::results
