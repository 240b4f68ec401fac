// The dice-infill suite's library on items written for this project (tests/data/dice_infill):
// loading sorts by id and hashes the reference; every malformed file is one error line naming the
// item; the answer's middle is assembled between prefix and suffix (the reference middle gives
// cuda_code back, an empty one prefix + suffix); a span filled natively goes in verbatim; exact match
// and edit distance; the FIM prompt and the native context.
#include "benchmarks/dice_infill/infill_answer.hpp"
#include "benchmarks/dice_infill/infill_items.hpp"
#include "benchmarks/dice_infill/infill_prompt.hpp"
#include "tests/test_files.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

using namespace dicebench;
using namespace dicebench::dice_infill;

namespace {

const std::string kItems = std::string(DICEBENCH_TEST_DATA_DIR) + "/dice_infill/items.json";

std::vector<InfillItem> items() {
  auto loaded = load_infill_items(kItems);
  REQUIRE_MESSAGE(loaded.ok(), (loaded.ok() ? "" : loaded.error().message));
  return std::move(*loaded);
}

// The error of loading `items` (a JSON value), one line.
std::string load_error(const nlohmann::json& file) {
  test::TempDir dir("dice-infill");
  test::write(dir / "items.json", file.dump());
  auto loaded = load_infill_items(dir / "items.json");
  REQUIRE_FALSE(loaded.ok());
  CHECK(loaded.error().message.find('\n') == std::string::npos);
  return loaded.error().message;
}

nlohmann::json good_item(std::int64_t id) {
  return {{"id", id}, {"pytorch_code", "ref"}, {"cuda_code", "abc"}, {"prefix", "a"}, {"middle", "b"}, {"suffix", "c"}};
}

}  // namespace

TEST_CASE("items load sorted by id, with the reference's content hash") {
  const auto loaded = items();
  REQUIRE(loaded.size() == 2);
  CHECK(loaded[0].id == 101);
  CHECK(loaded[1].id == 202);
  CHECK(loaded[0].content_hash == "sha256:" + sha256_hex(loaded[0].pytorch_code));
  CHECK(loaded[1].suffix.empty());
  for (const InfillItem& item : loaded) CHECK(item.prefix + item.middle + item.suffix == item.cuda_code);
}

TEST_CASE("a malformed file is one error line naming the item") {
  CHECK(load_error(nlohmann::json::object()).find("not a JSON array of items") != std::string::npos);
  CHECK(load_error(nlohmann::json::array()).find("no items") != std::string::npos);
  CHECK(load_error({good_item(1), 5}).find("item 1 is not an object") != std::string::npos);
  nlohmann::json no_id = good_item(1);
  no_id.erase("id");
  CHECK(load_error(nlohmann::json::array({no_id})).find("item 0 has no integer 'id' >= 0") != std::string::npos);
  nlohmann::json no_suffix = good_item(7);
  no_suffix["suffix"] = 3;
  CHECK(load_error({good_item(1), no_suffix}).find("item 1 (id 7) has no string 'suffix'") != std::string::npos);
  nlohmann::json broken = good_item(9);
  broken["middle"] = "X";
  CHECK(load_error(nlohmann::json::array({broken})).find("item 0 (id 9): prefix + middle + suffix is not cuda_code") !=
        std::string::npos);
  CHECK(load_error({good_item(4), good_item(4)}).find("item 1 (id 4) has the id of item 0") != std::string::npos);
  auto missing = load_infill_items("/nonexistent/items.json");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message.find("/nonexistent/items.json") != std::string::npos);
}

TEST_CASE("the answer's middle goes between prefix and suffix") {
  for (const InfillItem& item : items()) {
    CAPTURE(item.id);
    const InfillAnswer reference = assemble_answer(item, "Here it is:\n```python\n" + item.middle + "```\nDone.");
    REQUIRE(reference.candidate);
    CHECK(*reference.candidate == item.cuda_code);  // the first line's indentation comes from the reference
    CHECK(reference.exact_match);
    CHECK(reference.edit_distance == 0);

    const InfillAnswer empty = assemble_answer(item, "```python\n```");
    REQUIRE(empty.candidate);
    CHECK(*empty.candidate == item.prefix + item.suffix);
    CHECK_FALSE(empty.exact_match);
    CHECK(empty.edit_distance == static_cast<std::int64_t>(trim(item.middle).size()));

    const InfillAnswer none = assemble_answer(item, "I would rather not.");
    CHECK_FALSE(none.candidate);
    CHECK_FALSE(none.exact_match);
    CHECK(none.edit_distance == empty.edit_distance);
  }
  const InfillItem add = items()[0];
  std::string changed = add.middle;
  changed[changed.find("out=out")] = 'O';  // one byte substituted
  const InfillAnswer near = assemble_answer(add, "```python\n" + changed + "```");
  CHECK_FALSE(near.exact_match);
  CHECK(near.edit_distance == 1);
  CHECK(*near.candidate == add.prefix + changed + add.suffix);
}

TEST_CASE("the FIM prompt shows the reference, the prefix and the suffix, never the middle") {
  const InfillItem add = items()[0];
  const std::string prompt = build_fim_prompt(add);
  CHECK(prompt.find(add.pytorch_code) != std::string::npos);
  CHECK(prompt.find("```python\n" + add.prefix) != std::string::npos);
  CHECK(prompt.find(add.suffix) != std::string::npos);
  CHECK(prompt.find("torch.add(x, y, out=out)") == std::string::npos);
  CHECK(prompt.find("Answer with the missing span only, in one ```python code block") != std::string::npos);
}

TEST_CASE("a span filled natively goes between prefix and suffix verbatim, measured as a chat answer's middle") {
  for (const InfillItem& item : items()) {
    CAPTURE(item.id);
    const InfillAnswer reference = assemble_span(item, item.middle);
    REQUIRE(reference.candidate);
    CHECK(*reference.candidate == item.cuda_code);
    CHECK(reference.exact_match);
    CHECK(reference.edit_distance == 0);
    // Its ends' whitespace is kept in the candidate (a chat answer's would come from the reference) but
    // not measured.
    const InfillAnswer padded = assemble_span(item, "\n\n" + item.middle + "  ");
    CHECK(*padded.candidate == item.prefix + "\n\n" + item.middle + "  " + item.suffix);
    CHECK(padded.exact_match);
    const InfillAnswer empty = assemble_span(item, "");
    CHECK(*empty.candidate == item.prefix + item.suffix);
    CHECK(empty.edit_distance == static_cast<std::int64_t>(trim(item.middle).size()));
  }
}

TEST_CASE("the native context is the reference, a blank line, then the prefix, never the middle") {
  const InfillItem add = items()[0];
  const std::string before = native_context_before(add);
  CHECK(before.rfind(add.pytorch_code, 0) == 0);
  CHECK(before.substr(before.size() - add.prefix.size()) == add.prefix);
  CHECK(before.find("\n\n" + add.prefix) != std::string::npos);
  CHECK(before.find("torch.add(x, y, out=out)") == std::string::npos);
}
