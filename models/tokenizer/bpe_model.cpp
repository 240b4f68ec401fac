// Byte-level BPE merging (see bpe_model.hpp).
#include "models/tokenizer/bpe_model.hpp"

#include "models/tokenizer/byte_level.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <functional>
#include <memory>

namespace dicebench::models {
namespace {

// One slot of the per-thread pre-token cache: a word of up to kMaxBytes bytes and its ids (up to
// kMaxIds), in one cache line. Direct-mapped: a new word takes its slot from the old one.
struct CacheSlot {
  static constexpr size_t kMaxBytes = 18, kMaxIds = 8, kSlots = size_t{1} << 16;
  uint64_t hash = 0;
  uint32_t serial = 0;  // the model's; 0 is never one, so a fresh slot is empty
  uint8_t length = 0, id_count = 0;
  char bytes[kMaxBytes];
  int32_t ids[kMaxIds];
};
static_assert(sizeof(CacheSlot) == 64);

CacheSlot* thread_cache() {
  thread_local std::unique_ptr<CacheSlot[]> slots(new CacheSlot[CacheSlot::kSlots]);
  return slots.get();
}

std::atomic<uint32_t> next_serial{1};

uint64_t pair_key(int32_t left, int32_t right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}

}  // namespace

Result<BpeModel> BpeModel::build(Spec spec) {
  BpeModel model;
  model.serial_ = next_serial.fetch_add(1);
  model.ignore_merges_ = spec.ignore_merges;
  model.byte_ids_.fill(-1);
  model.vocab_.reserve(spec.vocab.size());
  for (auto& [text, id] : spec.vocab) {
    if (std::optional<std::string> bytes = byte_level::to_bytes(text)) {
      if (bytes->size() == 1) model.byte_ids_[static_cast<unsigned char>((*bytes)[0])] = id;
      if (model.ignore_merges_) model.whole_words_.emplace(std::move(*bytes), id);
    }
    model.vocab_.emplace(std::move(text), id);
  }

  const size_t slots = std::bit_ceil(std::max<size_t>(16, spec.merges.size() * 2));
  model.merge_slots_.assign(slots, Merge{});
  model.merge_shift_ = 64 - std::countr_zero(slots);
  for (size_t rank = 0; rank < spec.merges.size(); ++rank) {
    const auto& [left, right] = spec.merges[rank];
    const auto left_id = model.token_id(left), right_id = model.token_id(right);
    const auto merged_id = model.token_id(left + right);
    if (!left_id || !right_id || !merged_id)
      return make_error("merge " + std::to_string(rank) + " ('" + left + "' '" + right + "'): " +
                        (!left_id || !right_id ? "names a token" : "the merged token is") + " not in the vocabulary");
    // A repeated pair takes its last rank, as Hugging Face's merge map does.
    const uint64_t key = pair_key(*left_id, *right_id);
    size_t slot = model.home_slot(key);
    while (model.merge_slots_[slot].pair != kEmpty && model.merge_slots_[slot].pair != key)
      slot = (slot + 1) & (slots - 1);
    model.merge_slots_[slot] = Merge{key, static_cast<int32_t>(rank), *merged_id};
  }
  return model;
}

std::optional<int32_t> BpeModel::token_id(std::string_view token_text) const {
  const auto it = vocab_.find(std::string(token_text));
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

const BpeModel::Merge* BpeModel::find_merge(int32_t left, int32_t right) const {
  const uint64_t key = pair_key(left, right);
  const size_t mask = merge_slots_.size() - 1;
  for (size_t slot = home_slot(key);; slot = (slot + 1) & mask) {
    const Merge& merge = merge_slots_[slot];
    if (merge.pair == key) return &merge;
    if (merge.pair == kEmpty) return nullptr;
  }
}

void BpeModel::encode(std::string_view bytes, std::vector<int32_t>& out) const {
  if (bytes.empty()) return;
  if (bytes.size() == 1) {
    if (const int32_t id = byte_ids_[static_cast<unsigned char>(bytes[0])]; id >= 0) out.push_back(id);
    return;
  }
  if (ignore_merges_) {
    if (const auto it = whole_words_.find(std::string(bytes)); it != whole_words_.end()) {
      out.push_back(it->second);
      return;
    }
  }
  if (bytes.size() > CacheSlot::kMaxBytes) {
    merge_word(bytes, out);
    return;
  }
  const uint64_t hash = std::hash<std::string_view>{}(bytes);
  CacheSlot& slot = thread_cache()[hash & (CacheSlot::kSlots - 1)];
  if (slot.serial == serial_ && slot.hash == hash && std::string_view(slot.bytes, slot.length) == bytes) {
    out.insert(out.end(), slot.ids, slot.ids + slot.id_count);
    return;
  }
  const size_t first = out.size();
  merge_word(bytes, out);
  if (out.size() - first <= CacheSlot::kMaxIds) {
    slot.serial = serial_;
    slot.hash = hash;
    slot.length = static_cast<uint8_t>(bytes.size());
    slot.id_count = static_cast<uint8_t>(out.size() - first);
    std::copy(bytes.begin(), bytes.end(), slot.bytes);
    std::copy(out.begin() + first, out.end(), slot.ids);
  }
}

// Symbols form a linked list over the byte positions; a min-heap holds candidate merges by
// (rank, position of the left symbol). Entries made stale by earlier merges are skipped.
void BpeModel::merge_word(std::string_view bytes, std::vector<int32_t>& out) const {
  struct Symbol {
    int32_t id;
    int32_t prev, next;  // -1 at the ends
    bool alive;
  };
  struct Candidate {
    int32_t rank, position, merged_id;
    bool operator>(const Candidate& other) const {
      return rank != other.rank ? rank > other.rank : position > other.position;
    }
  };
  thread_local std::vector<Symbol> symbols;
  thread_local std::vector<Candidate> heap;
  symbols.clear();
  for (unsigned char b : bytes) {
    if (byte_ids_[b] < 0) continue;
    const auto index = static_cast<int32_t>(symbols.size());
    symbols.push_back({byte_ids_[b], index - 1, index + 1, true});
  }
  if (symbols.empty()) return;
  symbols.back().next = -1;

  heap.clear();
  const auto offer = [&](int32_t left) {
    const int32_t right = symbols[left].next;
    if (right < 0) return;
    if (const Merge* merge = find_merge(symbols[left].id, symbols[right].id)) {
      heap.push_back({merge->rank, left, merge->merged_id});
      std::push_heap(heap.begin(), heap.end(), std::greater<>{});
    }
  };
  for (int32_t i = 0; i + 1 < static_cast<int32_t>(symbols.size()); ++i) offer(i);

  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), std::greater<>{});
    const Candidate top = heap.back();
    heap.pop_back();
    Symbol& left = symbols[top.position];
    if (!left.alive || left.next < 0) continue;
    Symbol& right = symbols[left.next];
    const Merge* merge = find_merge(left.id, right.id);
    if (!merge || merge->merged_id != top.merged_id || merge->rank != top.rank) continue;
    left.id = top.merged_id;
    right.alive = false;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = top.position;
    if (left.prev >= 0) offer(left.prev);
    offer(top.position);
  }
  for (int32_t i = 0; i >= 0; i = symbols[i].next) out.push_back(symbols[i].id);
}

}  // namespace dicebench::models
