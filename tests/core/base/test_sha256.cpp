// SHA-256 against the NIST FIPS 180-4 example vectors.
#include <doctest/doctest.h>

#include <string>

#include "core/base/sha256.hpp"

using dicebench::Sha256;
using dicebench::sha256_hex;

TEST_CASE("sha256 NIST vectors") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // The 448-bit message.
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // The 896-bit message.
  CHECK(sha256_hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmno"
                   "pqrstnopqrstu") == "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  // One million 'a'.
  CHECK(sha256_hex(std::string(1000000, 'a')) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("sha256 incremental updates agree with one-shot hashing across block boundaries") {
  Sha256 million;
  const std::string chunk(997, 'a');  // not a multiple of the 64-byte block
  std::size_t fed = 0;
  while (fed + chunk.size() <= 1000000) {
    million.update(chunk);
    fed += chunk.size();
  }
  million.update(std::string(1000000 - fed, 'a'));
  CHECK(million.hex() == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");

  for (std::size_t length : {55u, 56u, 63u, 64u, 65u, 119u, 120u, 128u}) {
    const std::string text(length, 'x');
    Sha256 split;
    split.update(text.substr(0, length / 3));
    split.update(text.substr(length / 3));
    CHECK(split.hex() == sha256_hex(text));
  }
  // Length padding edge cases, checked against sha256sum.
  CHECK(sha256_hex(std::string(55, 'a')) == "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  CHECK(sha256_hex(std::string(56, 'a')) == "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  CHECK(sha256_hex(std::string(64, 'a')) == "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}
