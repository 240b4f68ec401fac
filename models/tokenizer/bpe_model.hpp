// Byte-level BPE: splits one pre-token (raw bytes) into vocabulary ids by applying merges in rank
// order, as Hugging Face tokenizers' BPE model does (lowest rank first, leftmost first among
// equal ranks). Merge ranks live in an open-addressing hash table; results for repeated short
// pre-tokens are kept in a per-thread cache (no locks; the model is safe to share).
#pragma once

#include "core/base/result.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace dicebench::models {

class BpeModel {
 public:
  struct Spec {
    std::vector<std::pair<std::string, int32_t>> vocab;       // byte-level token text -> id
    std::vector<std::pair<std::string, std::string>> merges;  // in rank order
    bool ignore_merges = false;  // a pre-token that is itself in the vocabulary is taken whole
  };

  // Fails (message without the file name; the caller adds it) on merges of unknown tokens.
  static Result<BpeModel> build(Spec spec);

  // Appends the ids of `bytes` (one pre-token). Bytes without a vocabulary entry are dropped,
  // as Hugging Face does for a BPE model with no unk token.
  void encode(std::string_view bytes, std::vector<int32_t>& out) const;

  std::optional<int32_t> token_id(std::string_view token_text) const;

 private:
  BpeModel() = default;
  struct Merge {
    uint64_t pair = kEmpty;  // left id << 32 | right id
    int32_t rank = 0;
    int32_t merged_id = 0;
  };
  static constexpr uint64_t kEmpty = ~uint64_t{0};

  size_t home_slot(uint64_t pair) const { return (pair * 0x9E3779B97F4A7C15ull) >> merge_shift_; }
  const Merge* find_merge(int32_t left, int32_t right) const;
  void merge_word(std::string_view bytes, std::vector<int32_t>& out) const;

  std::unordered_map<std::string, int32_t> vocab_;
  std::unordered_map<std::string, int32_t> whole_words_;  // raw bytes -> id, for ignore_merges
  std::array<int32_t, 256> byte_ids_{};                   // -1 where the byte has no token
  std::vector<Merge> merge_slots_;                        // power-of-two size, linear probing
  int merge_shift_ = 64;
  bool ignore_merges_ = false;

  uint32_t serial_ = 0;  // tells this model's entries in the per-thread cache from others'
};

}  // namespace dicebench::models
