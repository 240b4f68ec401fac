// The ten local models: DICE and its SDAR base models decode by block diffusion (DICE's published
// `paper` preset), the autoregressive baselines greedily.
#include "models/local/model_catalog.hpp"

namespace dicebench::local {
namespace {

constexpr CatalogEntry kCatalog[] = {
    {"dice-1.7b", "DeadlyKitt3n/DICE-1.7B", "paper",
     "DeadlyKitt3n/DICE-1.7B: block diffusion, preset paper (libtorch engine)"},
    {"dice-4b", "DeadlyKitt3n/DICE-4B", "paper",
     "DeadlyKitt3n/DICE-4B: block diffusion, preset paper (libtorch engine)"},
    {"dice-8b", "DeadlyKitt3n/DICE-8B", "paper",
     "DeadlyKitt3n/DICE-8B: block diffusion, preset paper (libtorch engine)"},
    {"sdar-1.7b", "JetLM/SDAR-1.7B-Chat", "paper",
     "JetLM/SDAR-1.7B-Chat: block diffusion, preset paper (libtorch engine)"},
    {"sdar-4b", "JetLM/SDAR-4B-Chat", "paper", "JetLM/SDAR-4B-Chat: block diffusion, preset paper (libtorch engine)"},
    {"sdar-8b", "JetLM/SDAR-8B-Chat", "paper", "JetLM/SDAR-8B-Chat: block diffusion, preset paper (libtorch engine)"},
    {"qwen3-1.7b", "Qwen/Qwen3-1.7B", "greedy", "Qwen/Qwen3-1.7B: autoregressive, preset greedy (libtorch engine)"},
    {"qwen3-4b", "Qwen/Qwen3-4B", "greedy", "Qwen/Qwen3-4B: autoregressive, preset greedy (libtorch engine)"},
    {"qwen3-8b", "Qwen/Qwen3-8B", "greedy", "Qwen/Qwen3-8B: autoregressive, preset greedy (libtorch engine)"},
    {"cudallm-8b", "ByteDance-Seed/cudaLLM-8B", "greedy",
     "ByteDance-Seed/cudaLLM-8B: autoregressive, preset greedy (libtorch engine)"},
};

}  // namespace

std::span<const CatalogEntry> model_catalog() { return kCatalog; }

const CatalogEntry* find_model(std::string_view name) {
  for (const auto& entry : kCatalog)
    if (entry.name == name) return &entry;
  return nullptr;
}

}  // namespace dicebench::local
