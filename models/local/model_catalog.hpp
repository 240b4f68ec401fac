// The local models dicebench knows by name (dice-*, sdar-*, qwen3-*, cudallm-8b): where each is
// published on the Hugging Face hub and how it decodes by default.
#pragma once

#include <span>
#include <string_view>

namespace dicebench::local {

struct CatalogEntry {
  std::string_view name;            // what --model takes, e.g. "dice-8b"
  std::string_view hub_repo;        // e.g. "DeadlyKitt3n/DICE-8B"
  std::string_view default_preset;  // the engine's preset: "paper" (block diffusion) or "greedy" (AR)
  std::string_view summary;         // one line for `dicebench list models`
};

std::span<const CatalogEntry> model_catalog();
// nullptr for a name the catalog lacks.
const CatalogEntry* find_model(std::string_view name);

}  // namespace dicebench::local
