// Unit tests of the replay folder library: file names, scanning both kinds of file,
// collisions, gaps, missing requests, reading and the content digest.
#include "models/replay/replay_folder.hpp"
#include "tests/plugins/temp_folder.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

using dicebench::replay::file_name;
using dicebench::replay::FileKind;
using dicebench::replay::parse_file_name;
using dicebench::replay::ReplayFolder;
using dicebench::replay::SampleKey;
using dicebench::test::TempFolder;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

ReplayFolder open_ok(const TempFolder& folder) {
  auto opened = ReplayFolder::open(folder.path());
  REQUIRE_MESSAGE(opened.ok(), (opened.ok() ? "" : opened.error().message));
  return std::move(opened).value();
}

std::string open_error(const std::filesystem::path& path) {
  auto opened = ReplayFolder::open(path);
  REQUIRE_FALSE(opened.ok());
  return opened.error().message;
}

}  // namespace

TEST_CASE("replay file names: both layouts parse, everything else is rejected") {
  const auto kernel = parse_file_name("level_1_problem_23_sample_4_kernel.py");
  REQUIRE(kernel);
  CHECK(kernel->key == SampleKey{1, 23, 4});
  CHECK(kernel->kind == FileKind::kernel);
  const auto completion = parse_file_name("level_3_problem_100_sample_0.txt");
  REQUIRE(completion);
  CHECK(completion->key == SampleKey{3, 100, 0});
  CHECK(completion->kind == FileKind::completion);

  for (const char* other : {"level_1_problem_1_sample_0_prompt.txt", "level_1_problem_1_sample_0_kernel.txt",
                            "level_1_problem_1_sample_0.py", "level_1_problem_1_sample_0", "level_1_problem_1.txt",
                            "level_-1_problem_1_sample_0.txt", "level_1_problem_+1_sample_0.txt",
                            "level_1_problem_1_sample_99999999999.txt", "level_1_problem_1_sample_0.txt.bak",
                            "Level_1_problem_1_sample_0.txt", "README.md", ""})
    CHECK_MESSAGE(!parse_file_name(other), other);

  CHECK(file_name({2, 7, 1}, FileKind::kernel) == "level_2_problem_7_sample_1_kernel.py");
  CHECK(file_name({2, 7, 1}, FileKind::completion) == "level_2_problem_7_sample_1.txt");
  CHECK(dicebench::replay::describe({2, 7, 1}) == "level 2 problem 7 sample 1");
}

TEST_CASE("replay folder: kernel files and completion files are indexed, other entries ignored") {
  TempFolder folder;
  folder.write("level_1_problem_1_sample_0_kernel.py", "class ModelNew: pass\n");
  folder.write("level_1_problem_1_sample_1_kernel.py", "class ModelNew: pass  # 1\n");
  folder.write("level_1_problem_2_sample_0.txt", "Here:\n```python\nx = 1\n```\n");
  folder.write("level_1_problem_1_sample_0_prompt.txt", "a KernelBench prompt log");
  folder.write("notes.md", "not a sample");
  folder.write("level_1_problem_9_sample_0_kernel.py/inner.txt", "a folder named like a sample");

  const ReplayFolder replay = open_ok(folder);
  CHECK(replay.path() == folder.path());
  CHECK(replay.path().is_absolute());
  CHECK(replay.file_count() == 3);
  CHECK(replay.ignored() == std::vector<std::string>{"level_1_problem_1_sample_0_prompt.txt",
                                                     "level_1_problem_9_sample_0_kernel.py", "notes.md"});
  REQUIRE(replay.find({1, 1, 1}));
  CHECK(replay.find({1, 1, 1})->kind == FileKind::kernel);
  REQUIRE(replay.find({1, 2, 0}));
  CHECK(replay.find({1, 2, 0})->kind == FileKind::completion);
  CHECK_FALSE(replay.find({1, 9, 0}));

  const auto kernel = replay.read({1, 1, 1});
  REQUIRE(kernel.ok());
  CHECK(kernel->file_name == "level_1_problem_1_sample_1_kernel.py");
  CHECK(kernel->text == "class ModelNew: pass  # 1\n");
  CHECK(kernel->kind == FileKind::kernel);
  const auto completion = replay.read({1, 2, 0});
  REQUIRE(completion.ok());
  CHECK(completion->text == "Here:\n```python\nx = 1\n```\n");
  CHECK(completion->kind == FileKind::completion);
}

TEST_CASE("replay folder: a relative path with a trailing slash becomes the absolute folder") {
  TempFolder folder;
  folder.write("level_1_problem_1_sample_0.txt", "x");
  const auto previous = std::filesystem::current_path();
  std::filesystem::current_path(folder.path().parent_path());
  auto opened = ReplayFolder::open(folder.path().filename().string() + "/");
  std::filesystem::current_path(previous);
  REQUIRE(opened.ok());
  CHECK(opened->path() == folder.path());
}

TEST_CASE("replay folder: both kinds of file for one sample is an error naming both") {
  TempFolder folder;
  folder.write("level_1_problem_3_sample_0_kernel.py", "a");
  folder.write("level_1_problem_3_sample_0.txt", "b");
  const std::string message = open_error(folder.path());
  CHECK(contains(message, folder.path().string()));
  CHECK(contains(message, "level_1_problem_3_sample_0_kernel.py"));
  CHECK(contains(message, "level_1_problem_3_sample_0.txt"));
  CHECK(contains(message, "level 1 problem 3 sample 0"));

  TempFolder zeros;  // two spellings of the same numbers collide as well
  zeros.write("level_1_problem_3_sample_0.txt", "a");
  zeros.write("level_01_problem_3_sample_0.txt", "b");
  const std::string zeros_message = open_error(zeros.path());
  CHECK(contains(zeros_message, "level_01_problem_3_sample_0.txt"));
  CHECK(contains(zeros_message, "level_1_problem_3_sample_0.txt"));
}

TEST_CASE("replay folder: missing, not a directory, or without replay files") {
  TempFolder folder;
  const std::string expected = "level_<L>_problem_<P>_sample_<S>_kernel.py";

  const std::string missing = open_error(folder.path() / "absent");
  CHECK(contains(missing, (folder.path() / "absent").string()));
  CHECK(contains(missing, "does not exist"));
  CHECK(contains(missing, expected));
  CHECK(contains(missing, "level_<L>_problem_<P>_sample_<S>.txt"));

  const auto file = folder.write("file.txt", "x");
  const std::string not_directory = open_error(file);
  CHECK(contains(not_directory, file.string()));
  CHECK(contains(not_directory, "not a directory"));
  CHECK(contains(not_directory, expected));

  const std::string unrecognised = open_error(folder.path());
  CHECK(contains(unrecognised, folder.path().string()));
  CHECK(contains(unrecognised, "no replay files"));
  CHECK(contains(unrecognised, expected));

  TempFolder empty;
  CHECK(contains(open_error(empty.path()), "no replay files"));

  for (const std::string& message : {missing, not_directory, unrecognised})
    CHECK(message.find('\n') == std::string::npos);
}

TEST_CASE("replay folder: stored samples per level, with gaps and absent levels as errors") {
  TempFolder folder;
  for (int s = 0; s < 3; ++s) folder.write(file_name({1, 1, s}, FileKind::kernel), "k");
  folder.write(file_name({1, 2, 0}, FileKind::completion), "c");
  folder.write(file_name({1, 10, 0}, FileKind::kernel), "k");
  folder.write(file_name({1, 10, 1}, FileKind::completion), "c");  // the kinds may mix across samples
  folder.write(file_name({2, 1, 0}, FileKind::kernel), "k");
  folder.write(file_name({2, 3, 0}, FileKind::kernel), "k");
  folder.write(file_name({2, 3, 1}, FileKind::kernel), "k");
  folder.write(file_name({2, 3, 3}, FileKind::kernel), "k");
  folder.write(file_name({3, 5, 1}, FileKind::kernel), "k");
  folder.write(file_name({3, 6, 0}, FileKind::kernel), "k");
  folder.write(file_name({3, 6, 4}, FileKind::kernel), "k");
  for (int s = 0; s < 12; ++s)
    if (s != 6 && s != 7 && s != 8) folder.write(file_name({4, 2, s}, FileKind::kernel), "k");
  const ReplayFolder replay = open_ok(folder);

  const auto level1 = replay.stored_samples(1);
  REQUIRE(level1.ok());
  CHECK(*level1 == std::map<int64_t, int32_t>{{1, 3}, {2, 1}, {10, 2}});

  const auto level2 = replay.stored_samples(2);
  REQUIRE_FALSE(level2.ok());
  CHECK(level2.error().message ==
        "replay folder " + folder.path().string() + " has a gap: level 2 problem 3 has samples 0,1,3 (missing 2)");

  const auto level3 = replay.stored_samples(3);  // two problems with gaps: the first is named
  REQUIRE_FALSE(level3.ok());
  CHECK(level3.error().message == "replay folder " + folder.path().string() +
                                      " has a gap: level 3 problem 5 has samples 1 (missing 0); 1 more problems of "
                                      "that level have gaps");

  const auto level4 = replay.stored_samples(4);  // long runs are shown as ranges
  REQUIRE_FALSE(level4.ok());
  CHECK(contains(level4.error().message, "level 4 problem 2 has samples 0-5,9-11 (missing 6-8)"));

  const auto level5 = replay.stored_samples(5);
  REQUIRE_FALSE(level5.ok());
  CHECK(level5.error().message ==
        "replay folder " + folder.path().string() + " has no files for level 5 (it holds levels 1, 2, 3, 4)");
}

TEST_CASE("replay folder: every requested sample must have a file") {
  TempFolder folder;
  folder.write(file_name({1, 1, 0}, FileKind::kernel), "k");
  folder.write(file_name({1, 2, 0}, FileKind::completion), "c");
  const ReplayFolder replay = open_ok(folder);

  const std::vector<SampleKey> present{{1, 1, 0}, {1, 2, 0}, {1, 1, 0}};
  CHECK(replay.check_available(present).ok());

  const std::vector<SampleKey> some_missing{{1, 1, 0}, {1, 1, 1}, {1, 2, 0}, {1, 3, 0},
                                            {2, 1, 0}, {1, 1, 1}, {1, 4, 0}, {1, 5, 0}};
  const auto checked = replay.check_available(some_missing);
  REQUIRE_FALSE(checked.ok());
  CHECK(checked.error().message ==
        "replay folder " + folder.path().string() +
            " lacks 5 of 7 requested samples: level 1 problem 1 sample 1, level 1 problem 3 sample 0, level 2 problem "
            "1 sample 0 and 2 more (expected level_1_problem_1_sample_1_kernel.py or level_1_problem_1_sample_1.txt)");

  const auto unread = replay.read({1, 3, 0});
  REQUIRE_FALSE(unread.ok());
  CHECK(contains(unread.error().message, "level_1_problem_3_sample_0_kernel.py"));
}

TEST_CASE("replay folder: a file that disappeared after opening is an error naming it") {
  TempFolder folder;
  const auto file = folder.write(file_name({1, 1, 0}, FileKind::kernel), "k");
  folder.write(file_name({1, 2, 0}, FileKind::kernel), "k");
  const ReplayFolder replay = open_ok(folder);
  std::filesystem::remove(file);
  const auto read = replay.read({1, 1, 0});
  REQUIRE_FALSE(read.ok());
  CHECK(contains(read.error().message, folder.path().string()));
  CHECK(contains(read.error().message, "level_1_problem_1_sample_0_kernel.py"));
  CHECK(contains(read.error().message, "No such file or directory"));
  const auto digest = replay.content_sha256();
  REQUIRE_FALSE(digest.ok());
  CHECK(contains(digest.error().message, "level_1_problem_1_sample_0_kernel.py"));
}

TEST_CASE("replay folder: the content digest covers names and contents, not order or other files") {
  const auto digest_of = [](const std::vector<std::pair<std::string, std::string>>& files) {
    TempFolder folder;
    for (const auto& [name, content] : files) folder.write(name, content);
    auto replay = ReplayFolder::open(folder.path());
    REQUIRE(replay.ok());
    auto digest = replay->content_sha256();
    REQUIRE(digest.ok());
    return *digest;
  };
  const std::string base =
      digest_of({{"level_1_problem_1_sample_0.txt", "a"}, {"level_1_problem_2_sample_0.txt", "b"}});
  CHECK(base.size() == 64);
  CHECK(base == digest_of({{"level_1_problem_2_sample_0.txt", "b"}, {"level_1_problem_1_sample_0.txt", "a"}}));
  CHECK(base ==
        digest_of({{"level_1_problem_1_sample_0.txt", "a"}, {"level_1_problem_2_sample_0.txt", "b"}, {"x.md", "y"}}));
  CHECK(base != digest_of({{"level_1_problem_1_sample_0.txt", "a"}, {"level_1_problem_2_sample_0.txt", "c"}}));
  CHECK(base != digest_of({{"level_1_problem_1_sample_0.txt", "a"}, {"level_1_problem_3_sample_0.txt", "b"}}));
  CHECK(base != digest_of({{"level_1_problem_1_sample_0.txt", "a"}, {"level_1_problem_2_sample_0_kernel.py", "b"}}));
}
