// NFC: canonical decomposition, canonical ordering, canonical composition (Unicode UAX #15), on
// tables generated at build time by make_nfc_tables.py; Hangul syllables arithmetically.
#include "models/tokenizer/unicode_nfc.hpp"

#include "models/tokenizer/utf8.hpp"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <vector>

namespace dicebench::models {
namespace {

struct CombiningClass {
  char32_t code_point;
  uint8_t combining_class;
};
struct Decomposition {
  char32_t code_point;
  uint16_t offset;  // into kDecompositionCodePoints
  uint8_t length;
};
struct Composition {
  char32_t first, second, composite;
};

#include "unicode_nfc_tables.inc"

constexpr char32_t kHangulBase = 0xAC00, kLeadBase = 0x1100, kVowelBase = 0x1161, kTrailBase = 0x11A7;
constexpr char32_t kLeadCount = 19, kVowelCount = 21, kTrailCount = 28;
constexpr char32_t kSyllablesPerLead = kVowelCount * kTrailCount, kSyllableCount = kLeadCount * kSyllablesPerLead;

bool is_hangul_syllable(char32_t cp) { return cp >= kHangulBase && cp < kHangulBase + kSyllableCount; }

uint8_t combining_class(char32_t cp) {
  if (cp < 0x300) return 0;
  const auto it = std::lower_bound(std::begin(kCombiningClasses), std::end(kCombiningClasses), cp,
                                   [](const CombiningClass& e, char32_t c) { return e.code_point < c; });
  return it != std::end(kCombiningClasses) && it->code_point == cp ? it->combining_class : 0;
}

const Decomposition* find_decomposition(char32_t cp) {
  const auto it = std::lower_bound(std::begin(kDecompositions), std::end(kDecompositions), cp,
                                   [](const Decomposition& e, char32_t c) { return e.code_point < c; });
  return it != std::end(kDecompositions) && it->code_point == cp ? &*it : nullptr;
}

// The primary composite of (first, second), or 0.
char32_t compose(char32_t first, char32_t second) {
  if (first >= kLeadBase && first < kLeadBase + kLeadCount && second >= kVowelBase && second < kVowelBase + kVowelCount)
    return kHangulBase + ((first - kLeadBase) * kVowelCount + (second - kVowelBase)) * kTrailCount;
  if (is_hangul_syllable(first) && (first - kHangulBase) % kTrailCount == 0 && second > kTrailBase &&
      second < kTrailBase + kTrailCount)
    return first + (second - kTrailBase);
  const auto it = std::lower_bound(std::begin(kCompositions), std::end(kCompositions), std::pair{first, second},
                                   [](const Composition& e, std::pair<char32_t, char32_t> key) {
                                     return std::pair{e.first, e.second} < key;
                                   });
  return it != std::end(kCompositions) && it->first == first && it->second == second ? it->composite : 0;
}

// True when NFC could change this code point or combine it with its neighbour.
bool may_change(char32_t cp) {
  if (cp < 0x300) return find_decomposition(cp) != nullptr;  // e.g. Latin letters with accents
  if (is_hangul_syllable(cp) || (cp >= kVowelBase && cp < kVowelBase + kVowelCount) ||
      (cp > kTrailBase && cp < kTrailBase + kTrailCount))
    return true;
  return combining_class(cp) != 0 || find_decomposition(cp) != nullptr ||
         std::binary_search(std::begin(kCompositionSeconds), std::end(kCompositionSeconds), cp);
}

void decompose(char32_t cp, std::vector<char32_t>& out) {
  if (is_hangul_syllable(cp)) {
    const char32_t index = cp - kHangulBase;
    out.push_back(kLeadBase + index / kSyllablesPerLead);
    out.push_back(kVowelBase + (index % kSyllablesPerLead) / kTrailCount);
    if (index % kTrailCount != 0) out.push_back(kTrailBase + index % kTrailCount);
  } else if (const Decomposition* d = find_decomposition(cp)) {
    out.insert(out.end(), kDecompositionCodePoints + d->offset, kDecompositionCodePoints + d->offset + d->length);
  } else {
    out.push_back(cp);
  }
}

}  // namespace

std::string to_nfc(std::string_view text) {
  bool needed = false;
  for (size_t pos = 0; pos < text.size() && !needed;) {
    if (static_cast<unsigned char>(text[pos]) < 0x80) {
      ++pos;
      continue;
    }
    const utf8::Step step = utf8::next(text, pos);
    needed = may_change(step.code_point);
    pos += step.length;
  }
  if (!needed) return std::string(text);

  std::vector<char32_t> code_points;
  code_points.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const utf8::Step step = utf8::next(text, pos);
    decompose(step.code_point, code_points);
    pos += step.length;
  }
  // Canonical ordering: a stable sort of each run of non-starters by combining class.
  for (size_t i = 0; i < code_points.size();) {
    if (combining_class(code_points[i]) == 0) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < code_points.size() && combining_class(code_points[end]) != 0) ++end;
    std::stable_sort(code_points.begin() + i, code_points.begin() + end,
                     [](char32_t a, char32_t b) { return combining_class(a) < combining_class(b); });
    i = end;
  }
  // Canonical composition: each code point joins the last starter unless something between
  // them blocks it (a starter, or a non-starter of the same or a higher class).
  std::vector<char32_t> composed;
  composed.reserve(code_points.size());
  size_t starter = SIZE_MAX;
  for (char32_t cp : code_points) {
    const uint8_t cls = combining_class(cp);
    if (starter != SIZE_MAX) {
      const bool adjacent = starter + 1 == composed.size();
      const uint8_t previous = adjacent ? 0 : combining_class(composed.back());
      if (adjacent || (previous != 0 && previous < cls)) {
        if (const char32_t composite = compose(composed[starter], cp)) {
          composed[starter] = composite;
          continue;
        }
      }
    }
    if (cls == 0) starter = composed.size();
    composed.push_back(cp);
  }
  std::string out;
  out.reserve(text.size());
  for (char32_t cp : composed) utf8::append(out, cp);
  return out;
}

}  // namespace dicebench::models
