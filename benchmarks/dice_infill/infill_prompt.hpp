// What a model sees of an infilling item (README.md "Kernel infilling"). Autoregressive and served
// models get the fill-in-the-middle chat prompt: the reference architecture, the code before and
// after the missing span, and the ask to answer with the missing span alone in one code block.
// Models that fill spans natively get the text before the span (the reference architecture, a blank
// line, the prefix) and the text after it (the suffix), with no chat template around them.
#pragma once

#include <string>

#include "benchmarks/dice_infill/infill_items.hpp"

namespace dicebench::dice_infill {

std::string build_fim_prompt(const InfillItem& item);
// The text before the span for a model that fills it natively.
std::string native_context_before(const InfillItem& item);

}  // namespace dicebench::dice_infill
