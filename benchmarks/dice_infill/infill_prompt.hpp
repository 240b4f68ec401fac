// The fill-in-the-middle chat prompt for autoregressive and served models (README.md "Kernel
// infilling"): the reference architecture, the code before and after the missing span, and the ask
// to answer with the missing span alone in one code block.
#pragma once

#include <string>

#include "benchmarks/dice_infill/infill_items.hpp"

namespace dicebench::dice_infill {

std::string build_fim_prompt(const InfillItem& item);

}  // namespace dicebench::dice_infill
