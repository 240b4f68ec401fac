// The flags stored beside verdicts: evaluation flags (evaluation_flags.flag), which qualify one
// sample's verdict without changing it, and problem traits (problems.traits, problem_traits.traits),
// which say that a problem can be passed without computing its answer. The one definition of both
// vocabularies: the worker's names (protocol.py PROBLEM_TRAITS) are checked against it by a test.
#pragma once

#include <array>
#include <optional>
#include <string_view>

namespace dicebench::results {

enum class EvaluationFlag {
  output_aliases_input,   // an output shares storage with an input (returned the input, or a view of it)
  below_memory_floor,     // faster than reading the inputs and writing the outputs at the GPU's bandwidth
  excessive_speedup,      // speedup above eval.speedup_bound (informative only)
  borderline,             // the worst comparison's margin lies in [0.5, 2]: a new draw of inputs may flip it
  fastpath_disagreement,  // the NVRTC fast path and torch's toolchain gave different verdicts
  backend_unused,         // the source does not use the kernel language the prompt asked for (the suite's review)
};

inline constexpr std::array<EvaluationFlag, 6> kAllEvaluationFlags = {
    EvaluationFlag::output_aliases_input, EvaluationFlag::below_memory_floor, EvaluationFlag::excessive_speedup,
    EvaluationFlag::borderline, EvaluationFlag::fastpath_disagreement, EvaluationFlag::backend_unused,
};

enum class ProblemTrait {
  constant_output,       // one draw's output passes for every other draw: independent of the inputs
  zeros_pass,            // an all-zero output passes the tolerance (max |ref| within atol)
  output_equals_input,   // returning one of the inputs passes the tolerance
  near_constant_output,  // (more than one element) a fill with the output's own mean passes: variance near zero
};

inline constexpr std::array<ProblemTrait, 4> kAllProblemTraits = {
    ProblemTrait::constant_output, ProblemTrait::zeros_pass, ProblemTrait::output_equals_input,
    ProblemTrait::near_constant_output,
};

std::string_view flag_name(EvaluationFlag flag);
std::optional<EvaluationFlag> parse_flag(std::string_view name);
std::string_view flag_description(EvaluationFlag flag);

std::string_view trait_name(ProblemTrait trait);
std::optional<ProblemTrait> parse_trait(std::string_view name);
std::string_view trait_description(ProblemTrait trait);

// A verdict's margin is borderline when it lies in [kBorderlineLow, kBorderlineHigh]: the worst
// element used between half and twice its allowed difference |c - r| / (atol + rtol * |r|).
inline constexpr double kBorderlineLow = 0.5;
inline constexpr double kBorderlineHigh = 2.0;
bool is_borderline_margin(double margin);

}  // namespace dicebench::results
