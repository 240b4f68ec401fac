// SHA-256 (FIPS 180-4): content hashes for problem files, prompts and prompt files.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace dicebench {

// Incremental hasher: update() any number of times, then hex() once.
class Sha256 {
 public:
  Sha256();
  void update(std::string_view data);
  // The digest as 64 lowercase hex digits. Finishes the hash; call once.
  std::string hex();

 private:
  void compress(const unsigned char* block);

  std::array<std::uint32_t, 8> state_;
  std::array<unsigned char, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t total_bytes_ = 0;
};

// SHA-256 of `data` as 64 lowercase hex digits.
std::string sha256_hex(std::string_view data);

}  // namespace dicebench
