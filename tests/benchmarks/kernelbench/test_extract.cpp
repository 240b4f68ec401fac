// Unit tests: code-block extraction. Expected values agree with KernelBench's extract_first_code /
// extract_last_code run on the same inputs.
#include <doctest/doctest.h>

#include "benchmarks/kernelbench/extract.hpp"

namespace kb = dicebench::kernelbench;
using kb::Which;

TEST_CASE("extract_candidate takes the first fenced block and strips a python/cpp tag") {
  CHECK(kb::extract_candidate("Here:\n```python\nprint(1)\n```\nbye") == "print(1)");
  CHECK(kb::extract_candidate("```cpp\n#include <x>\nint main() {}\n```") == "#include <x>\nint main() {}");
  CHECK(kb::extract_candidate("```\n  indented\n```") == "indented");
}

TEST_CASE("extract_candidate: no block or an unclosed fence") {
  CHECK_FALSE(kb::extract_candidate("no block here").has_value());
  CHECK_FALSE(kb::extract_candidate("").has_value());
  CHECK_FALSE(kb::extract_candidate("```python\nx = 1").has_value());
  // The closed block counts; the unclosed one after it does not exist for the regex.
  CHECK(kb::extract_candidate("```a```\n```python\nunclosed") == "a");
  CHECK(kb::extract_candidate("```a```\n```python\nunclosed", Which::Last) == "a");
}

TEST_CASE("extract_candidate: CRLF and empty blocks and fences pairing left to right") {
  CHECK(kb::extract_candidate("```python\r\nx = 1\r\ny = 2\r\n```") == "x = 1\r\ny = 2");
  CHECK(kb::extract_candidate("``````") == "");
  CHECK(kb::extract_candidate("```\n```") == "");
  CHECK(kb::extract_candidate("```python```") == "");
  CHECK(kb::extract_candidate("````python\nx\n````") == "`python\nx");
  CHECK(kb::extract_candidate("a ``` b ``` c ``` d") == "b");
  CHECK(kb::extract_candidate("a ``` b ``` c ``` d", Which::Last) == "b");
}

TEST_CASE("extract_candidate: thinking text before the code") {
  CHECK(kb::extract_candidate(
            "<think>Plan: fuse the ops, use shared memory.</think>\n\nSure:\n```cpp\n#include <x>\n```") ==
        "#include <x>");
}

TEST_CASE("extract_candidate: first and last of several blocks") {
  const char* text = "```python\nfirst\n```\ntext\n```python\nsecond\n```\n";
  CHECK(kb::extract_candidate(text) == "first");
  CHECK(kb::extract_candidate(text, Which::First) == "first");
  CHECK(kb::extract_candidate(text, Which::Last) == "second");
}

TEST_CASE("extract_candidate strips tags exactly as KernelBench does") {
  // Only python and cpp are stripped; other tags stay.
  CHECK(kb::extract_candidate("```cuda\n__global__ void k(){}\n```") == "cuda\n__global__ void k(){}");
  // startswith: "python3" loses "python".
  CHECK(kb::extract_candidate("```python3\nx```") == "3\nx");
  // Tags are tried in order: python, then cpp.
  CHECK(kb::extract_candidate("```pythoncpp\nx```") == "x");
  CHECK(kb::extract_candidate("```cpp python\nx```") == "python\nx");
  // Python's str.strip() also removes Unicode spaces such as U+00A0.
  CHECK(kb::extract_candidate("\xc2\xa0```python\n\xc2\xa0x\xc2\xa0\n```") == "x");
  // Custom tags.
  CHECK(kb::extract_candidate("```cuda\nk\n```", Which::First, {"cuda"}) == "k");
  CHECK(kb::default_language_tags() == std::vector<std::string>{"python", "cpp"});
}
