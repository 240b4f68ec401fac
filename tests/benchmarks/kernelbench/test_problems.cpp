// Unit tests: locating KernelBench and loading problem files, over tests/data/kernelbench.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include "benchmarks/kernelbench/locate.hpp"
#include "benchmarks/kernelbench/problems.hpp"
#include "core/base/sha256.hpp"
#include "tests/benchmarks/kernelbench/test_support.hpp"

namespace kb = dicebench::kernelbench;
using kbtest::ScratchDir;
namespace fs = std::filesystem;

namespace {
const std::string kHowTo =
    "get KernelBench with `git clone https://github.com/ScalingIntelligence/KernelBench` and pass its "
    "path with --kernelbench-root, kernelbench.root in the config, or DICEBENCH_KERNELBENCH_ROOT";
}

TEST_CASE("locate_levels_root accepts the folder that holds level1/ directly") {
  ScratchDir scratch;
  kbtest::copy_test_data(scratch.path() / "kb");
  auto found = kb::locate_levels_root((scratch.path() / "kb").string());
  REQUIRE_MESSAGE(found.ok(), (found.ok() ? "" : found.error().message));
  CHECK(found.value() == fs::canonical(scratch.path() / "kb"));
  // A trailing slash names the same folder.
  auto with_slash = kb::locate_levels_root((scratch.path() / "kb").string() + "/");
  REQUIRE(with_slash.ok());
  CHECK(with_slash.value() == found.value());
}

TEST_CASE("locate_levels_root accepts a repository root holding KernelBench/level1") {
  ScratchDir scratch;
  kbtest::copy_test_data(scratch.path() / "repo" / "KernelBench");
  auto found = kb::locate_levels_root((scratch.path() / "repo").string());
  REQUIRE_MESSAGE(found.ok(), (found.ok() ? "" : found.error().message));
  CHECK(found.value() == fs::canonical(scratch.path() / "repo" / "KernelBench"));
}

TEST_CASE("locate_levels_root explains a missing or wrong or empty root") {
  ScratchDir scratch;
  const fs::path base = fs::canonical(scratch.path());
  SUBCASE("missing") {
    auto found = kb::locate_levels_root((base / "nope").string());
    REQUIRE_FALSE(found.ok());
    CHECK(found.error().message ==
          "KernelBench root " + (base / "nope").string() + " does not exist (looked for level1/ ... level4/ in " +
              (base / "nope" / "KernelBench").string() + " and in " + (base / "nope").string() + "); " + kHowTo);
  }
  SUBCASE("exists without levels") {
    fs::create_directories(base / "empty" / "KernelBench");
    auto found = kb::locate_levels_root((base / "empty").string());
    REQUIRE_FALSE(found.ok());
    CHECK(found.error().message == "KernelBench root " + (base / "empty").string() +
                                       " holds no KernelBench problems (looked for level1/ ... level4/ in " +
                                       (base / "empty" / "KernelBench").string() + " and in " +
                                       (base / "empty").string() + "); " + kHowTo);
  }
  SUBCASE("empty string") {
    auto found = kb::locate_levels_root("");
    REQUIRE_FALSE(found.ok());
    CHECK(found.error().message == "no KernelBench root was given; " + kHowTo);
  }
}

TEST_CASE("load_level reads <id>_<Name>.py files sorted by id and ignores the rest") {
  auto problems = kb::load_level(kbtest::data_dir(), 1);
  REQUIRE_MESSAGE(problems.ok(), (problems.ok() ? "" : problems.error().message));
  REQUIRE(problems->size() == 3);
  const auto& p = problems.value();
  CHECK(p[0].id == 1);
  CHECK(p[0].name == "Add");
  CHECK(p[1].id == 2);
  CHECK(p[1].name == "ReluSquare");
  CHECK(p[2].id == 10);
  CHECK(p[2].name == "RowSum");
  for (const auto& problem : p) {
    CHECK(problem.level == 1);
    CHECK(problem.path.is_absolute());
    CHECK(problem.source == kbtest::read_bytes(problem.path));
    CHECK(problem.content_hash == "sha256:" + dicebench::sha256_hex(problem.source));
  }
  CHECK(p[0].path == fs::absolute(kbtest::data_dir() / "level1" / "1_Add.py"));
  // Pinned: the hash of our own test file, computed with sha256sum.
  CHECK(p[0].content_hash == "sha256:41c6ab5455e7c332f28cc28e705bb4f10dd6fb0b0d1125fbe6075f762e554ca2");

  auto level2 = kb::load_level(kbtest::data_dir(), 2);
  REQUIRE(level2.ok());
  REQUIRE(level2->size() == 1);
  CHECK(level2->at(0).id == 1);
  CHECK(level2->at(0).level == 2);
  CHECK(level2->at(0).name == "MatmulRelu");
  CHECK(level2->at(0).content_hash == "sha256:e0bb8226e734e45a4fa57e257bca002648d281a06c876651bf8ed03418f1b3ff");
}

TEST_CASE("load_level skips names that are not problem files") {
  ScratchDir scratch;
  const fs::path level = scratch.path() / "level1";
  kbtest::write_bytes(level / "7_Seven.py", "x = 7\n");
  kbtest::write_bytes(level / "helpers.py", "");
  kbtest::write_bytes(level / "1_.py", "");
  kbtest::write_bytes(level / "x1_Name.py", "");
  kbtest::write_bytes(level / "2_Name.txt", "");
  kbtest::write_bytes(level / "3_Name.py.orig", "");
  fs::create_directories(level / "4_Folder.py");
  auto problems = kb::load_level(scratch.path(), 1);
  REQUIRE_MESSAGE(problems.ok(), (problems.ok() ? "" : problems.error().message));
  REQUIRE(problems->size() == 1);
  CHECK(problems->at(0).id == 7);
  CHECK(problems->at(0).name == "Seven");
}

TEST_CASE("load_level reports a missing level folder") {
  auto problems = kb::load_level(kbtest::data_dir(), 4);
  REQUIRE_FALSE(problems.ok());
  CHECK(problems.error().message == "no level4 folder under " + kbtest::data_dir().string());
}

TEST_CASE("load_level reports duplicate ids naming both files") {
  ScratchDir scratch;
  kbtest::write_bytes(scratch.path() / "level1" / "3_First.py", "a\n");
  kbtest::write_bytes(scratch.path() / "level1" / "03_Second.py", "b\n");
  auto problems = kb::load_level(scratch.path(), 1);
  REQUIRE_FALSE(problems.ok());
  CHECK(problems.error().message ==
        "duplicate problem id 3 in " + (scratch.path() / "level1").string() + ": 03_Second.py and 3_First.py");
}

TEST_CASE("load_level reports an unreadable problem file naming it") {
  ScratchDir scratch;
  const fs::path file = scratch.path() / "level1" / "5_Locked.py";
  kbtest::write_bytes(file, "secret\n");
  REQUIRE(::chmod(file.c_str(), 0) == 0);
  if (std::ifstream(file).good()) {
    MESSAGE("skipped: " << file.string() << " is still readable after chmod 000 (running as root?)");
    return;
  }
  auto problems = kb::load_level(scratch.path(), 1);
  REQUIRE_FALSE(problems.ok());
  CHECK(problems.error().message == "cannot read " + file.string() + ": Permission denied");
}
