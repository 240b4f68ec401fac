// Integration tests of the dicebench CLI: list, run --generate-only with replay and a scriptable
// test model, query/report/show, resume after a kill and after Ctrl-C, the flags suite plugins
// declare, and every bad-input path ending in one error line, a non-zero exit and an untouched
// database.
#include "cli_runner.hpp"
#include "tests/test_files.hpp"

#include "core/base/sha256.hpp"
#include "core/base/text.hpp"
#include "results/store/query.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <signal.h>
#include <sqlite3.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

using namespace dicebench;
using test::run_cli;
namespace fs = std::filesystem;

using namespace dicebench::test;

namespace {

const std::string kKernelBench = std::string(DICEBENCH_TEST_DATA_DIR) + "/kernelbench";
const std::string kTestPlugins = std::string("DICEBENCH_PLUGIN_PATH=") + DICEBENCH_TEST_PLUGINS + "/good";
// The test model and the test suite that declares --test-greeting, with `more` folders of test plugins.
std::string suite_option_plugins(const std::string& more = "") {
  const std::string folders = DICEBENCH_TEST_PLUGINS;
  return "DICEBENCH_PLUGIN_PATH=" + folders + "/good:" + folders + "/suite_options" +
         (more.empty() ? "" : ":" + folders + "/" + more);
}

void make_replay_folder(const std::string& dir) {
  fs::create_directories(dir);
  write(dir + "/level_1_problem_1_sample_0_kernel.py", "class ModelNew:\n    pass  # add\n");
  write(dir + "/level_1_problem_2_sample_0_kernel.py", "class ModelNew:\n    pass  # relu square\n");
  write(dir + "/level_1_problem_10_sample_0.txt", "Sure! Here it is:\n```python\nclass ModelNew:\n    pass\n```\n");
  write(dir + "/level_1_problem_10_sample_1.txt", "No code this time.");
}

}  // namespace

TEST_CASE("list suites shows kernelbench-l1 to -l4 and list models shows replay") {
  auto suites = run_cli({"list", "suites"});
  CHECK(suites.exit_code == 0);
  for (const char* name : {"kernelbench-l1", "kernelbench-l2", "kernelbench-l3", "kernelbench-l4"})
    CHECK_MESSAGE(suites.out.find(name) != std::string::npos, suites.out);
  auto models = run_cli({"list", "models"});
  CHECK(models.exit_code == 0);
  CHECK(models.out.find("replay:<arg>") != std::string::npos);
}

TEST_CASE("a replay run stores one sample per file and query and report and show agree") {
  TempDir tmp("replay");
  make_replay_folder(tmp / "replay");
  const std::string db = tmp / "results.db";
  auto r = run_cli({"run", "--model", "replay:" + (tmp / "replay"), "--suite", "kernelbench-l1", "--kernelbench-root",
                    kKernelBench, "--generate-only", "--db", db});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out.find("run 1: replay:") != std::string::npos);
  auto counted = run_cli({"query", "select count(*) from samples", "--db", db, "--format", "csv"});
  CHECK(counted.exit_code == 0);
  CHECK(counted.out == "count(*)\n4\n");
  CHECK(scalar(db, "select count(*) from samples") == "4");
  CHECK(scalar(db, "select count(*) from samples where extraction = 'no_code_block'") == "1");
  CHECK(scalar(db, "select candidate from samples where problem_id = 10 and sample_index = 0") ==
        "class ModelNew:\n    pass");
  CHECK(scalar(db, "select status from runs where id = 1") == "finished");
  CHECK(scalar(db, "select count(*) from problems where run = 1") == "3");
  CHECK(scalar(db, "select json_extract(config, '$.samples.\"1/10\"') from runs") == "2");

  auto report = run_cli({"report", "1", "--db", db, "--json"});
  REQUIRE_MESSAGE(report.exit_code == 0, report.err);
  auto show = run_cli({"show", "1", "--db", db});
  REQUIRE_MESSAGE(show.exit_code == 0, show.err);
  CHECK(show.out.find("kernelbench-l1") != std::string::npos);

  // A second run into the same database only adds rows.
  auto again = run_cli({"run", "--model", "replay:" + (tmp / "replay"), "--suite", "kernelbench-l1",
                        "--kernelbench-root", kKernelBench, "--problems", "1-2", "--generate-only", "--db", db});
  REQUIRE_MESSAGE(again.exit_code == 0, again.err);
  CHECK(scalar(db, "select count(*) from samples") == "6");
}

TEST_CASE("the prompts' backend is recorded in the run and shown by report and show") {
  TempDir tmp("backend");
  make_replay_folder(tmp / "replay");
  const std::string db = tmp / "results.db";
  auto r = run_cli({"run", "--model", "replay:" + (tmp / "replay"), "--suite", "kernelbench-l1", "--kernelbench-root",
                    kKernelBench, "--generate-only", "--db", db, "--set", "kernelbench.backend=triton"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(scalar(db, "select json_extract(config, '$.suite.backend') from runs") == "triton");
  auto report = run_cli({"report", "1", "--db", db});
  REQUIRE_MESSAGE(report.exit_code == 0, report.err);
  CHECK(report.out.find("suite kernelbench-l1  backend triton") != std::string::npos);
  auto json = run_cli({"report", "1", "--db", db, "--json"});
  REQUIRE_MESSAGE(json.exit_code == 0, json.err);
  CHECK(nlohmann::json::parse(json.out)["run"]["backend"] == "triton");
  auto show = run_cli({"show", "1", "--db", db});
  CHECK(show.out.find("\"backend\": \"triton\"") != std::string::npos);
}

TEST_CASE(
    "a Triton run flags the candidate that never launches its kernel (the suite's review), not the one that does") {
  TempDir tmp("backend-check");
  const std::string db = tmp / "results.db";
  auto r = run_cli({"run", "--model", "replay:" + std::string(DICEBENCH_TEST_DATA_DIR) + "/replay/triton", "--suite",
                    "kernelbench-l1", "--kernelbench-root", kKernelBench, "--problems", "1", "--samples", "2",
                    "--device", "cpu", "--db", db, "--set", "kernelbench.backend=triton"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out.find("flagged: backend_unused 1") != std::string::npos);
  const auto verdicts = results::run_query(
      db,
      "select s.sample_index, e.status, coalesce(f.detail, '') from samples s join evaluations e on e.sample = s.id "
      "left join evaluation_flags f on f.sample = s.id and f.flag = 'backend_unused' order by s.sample_index");
  REQUIRE(verdicts.ok());
  REQUIRE(verdicts->rows.size() == 2);
  // The launched kernel, under renamed imports and an attribute: correct, not flagged.
  CHECK(std::get<std::string>(verdicts->rows[0][1]) == "correct");
  CHECK(std::get<std::string>(verdicts->rows[0][2]).empty());
  // The decoy: correct (torch adds), flagged with why.
  CHECK(std::get<std::string>(verdicts->rows[1][1]) == "correct");
  CHECK(std::get<std::string>(verdicts->rows[1][2]) ==
        "asked for triton: defines triton kernels (add_kernel) but never launches one");
}

TEST_CASE("eval --suite reviews each candidate as run does: the same verdict, flags and fields for the same pair") {
  TempDir tmp("eval-suite");
  const std::string db = tmp / "results.db";
  const std::string replay = std::string(DICEBENCH_TEST_DATA_DIR) + "/replay/triton";
  auto r = run_cli({"run", "--model", "replay:" + replay, "--suite", "kernelbench-l1", "--kernelbench-root",
                    kKernelBench, "--problems", "1", "--samples", "2", "--device", "cpu", "--db", db, "--set",
                    "kernelbench.backend=triton"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  for (const int sample : {0, 1}) {
    CAPTURE(sample);
    const auto stored = results::run_query(
        db,
        fmt::format(
            "select e.status, e.compiled, e.correct, coalesce(e.error_class, ''), coalesce(e.compile_path, ''), "
            "coalesce((select json_group_object(flag, detail) from evaluation_flags f where f.sample = s.id), '{{}}') "
            "from samples s join evaluations e on e.sample = s.id where s.sample_index = {}",
            sample));
    REQUIRE(stored.ok());
    REQUIRE(stored->rows.size() == 1);
    const auto& row = stored->rows[0];
    const auto eval = run_cli({"eval", "--problem", kKernelBench + "/level1/1_Add.py", "--candidate",
                               replay + fmt::format("/level_1_problem_1_sample_{}_kernel.py", sample), "--device",
                               "cpu", "--json", "--suite", "kernelbench-l1", "--kernelbench-root", kKernelBench,
                               "--set", "kernelbench.backend=triton"});
    REQUIRE_MESSAGE(eval.exit_code == 0, eval.err);
    const auto json = nlohmann::json::parse(eval.out);
    CHECK(json["verdict"] == std::get<std::string>(row[0]));
    CHECK(json["compiled"] == (std::get<int64_t>(row[1]) != 0));
    CHECK(json["correct"] == (std::get<int64_t>(row[2]) != 0));
    CHECK(json.value("error_class", "") == std::get<std::string>(row[3]));
    CHECK(json["compile"]["path"] == std::get<std::string>(row[4]));
    CHECK(json["flags"] == nlohmann::json::parse(std::get<std::string>(row[5])));
  }
  // Without --suite, eval has no suite to review the decoy with.
  const auto flagged = run_cli({"eval", "--problem", kKernelBench + "/level1/1_Add.py", "--candidate",
                                replay + "/level_1_problem_1_sample_1_kernel.py", "--device", "cpu", "--json"});
  REQUIRE_MESSAGE(flagged.exit_code == 0, flagged.err);
  CHECK_FALSE(nlohmann::json::parse(flagged.out)["flags"].contains("backend_unused"));
  // A problem the suite does not have (an RL task set's) is judged, with the suite's review too.
  const auto stranger =
      run_cli({"eval", "--problem", std::string(DICEBENCH_TEST_DATA_DIR) + "/eval/problem_linear_relu.py",
               "--candidate", replay + "/level_1_problem_1_sample_1_kernel.py", "--device", "cpu", "--suite",
               "kernelbench-l1", "--kernelbench-root", kKernelBench, "--json"});
  REQUIRE_MESSAGE(stranger.exit_code == 0, stranger.err);
  CHECK(nlohmann::json::parse(stranger.out)["flags"].contains("backend_unused"));
}

TEST_CASE("a backend dicebench cannot evaluate, or whose module the workers' Python lacks, is one error line") {
  TempDir tmp("backend-refused");
  make_replay_folder(tmp / "replay");
  const std::string db = tmp / "results.db";
  for (const std::string backend : {"hip", "thunderkittens"}) {
    const auto r =
        run_cli({"run", "--model", "replay:" + (tmp / "replay"), "--suite", "kernelbench-l1", "--kernelbench-root",
                 kKernelBench, "--generate-only", "--db", db, "--set", "kernelbench.backend=" + backend});
    dicebench::test::check_one_error_line(r, "kernelbench.backend=" + backend + " cannot be evaluated");
  }
  // CuTe DSL's module (cutlass) is not in the project's environment, so a run that evaluates stops
  // before storing anything; generating its prompts needs no module.
  const auto cute =
      run_cli({"run", "--model", "replay:" + (tmp / "replay"), "--suite", "kernelbench-l1", "--kernelbench-root",
               kKernelBench, "--device", "cpu", "--db", db, "--set", "kernelbench.backend=cute"});
  if (std::system((std::string(DICEBENCH_PYTHON) + " -c 'import cutlass' 2>/dev/null").c_str()) != 0) {
    dicebench::test::check_one_error_line(cute,
                                          "kernelbench-l1's candidates import cutlass, which the workers' Python");
    CHECK(scalar(db, "select count(*) from runs") == "0");
  }
  const auto generated =
      run_cli({"run", "--model", "replay:" + (tmp / "replay"), "--suite", "kernelbench-l1", "--kernelbench-root",
               kKernelBench, "--generate-only", "--db", db, "--set", "kernelbench.backend=cute"});
  CHECK_MESSAGE(generated.exit_code == 0, generated.err);
}

TEST_CASE("a run killed midway resumes without redoing finished samples") {
  TempDir tmp("kill");
  const std::string db = tmp / "results.db";
  const std::vector<std::string> env = {kTestPlugins};
  const pid_t pid = test::start_cli(
      {"run", "--model", "test-slow", "--suite", "kernelbench-l1", "--kernelbench-root", kKernelBench, "--samples", "4",
       "--seed", "7", "--set", "test-slow.delay_ms=150", "--generate-only", "--db", db},
      env);
  // Wait until a few samples are stored, then kill without warning.
  int stored = 0;
  for (int i = 0; i < 200 && stored < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    auto q = results::run_query(db, "select count(*) from samples");
    if (q.ok() && !q->rows.empty()) stored = static_cast<int>(std::get<std::int64_t>(q->rows[0][0]));
  }
  kill(pid, SIGKILL);
  CHECK(test::wait_cli(pid) == 128 + SIGKILL);
  REQUIRE(stored >= 3);
  const std::string before = scalar(db, "select count(*) from samples");
  CHECK(std::stoi(before) < 12);
  CHECK(scalar(db, "select status from runs where id = 1") == "running");
  const std::string first_ids =
      scalar(db, "select group_concat(id || ':' || problem_id || '/' || sample_index) from samples");

  auto conflicting = run_cli({"run", "--resume", "1", "--model", "test-slow", "--generate-only", "--db", db}, env);
  check_one_error_line(conflicting, "drop --model");

  auto resumed = run_cli({"run", "--resume", "1", "--generate-only", "--db", db}, env);
  REQUIRE_MESSAGE(resumed.exit_code == 0, resumed.err);
  CHECK(resumed.out.find(before + " stored before") != std::string::npos);
  CHECK(scalar(db, "select count(*) from samples") == "12");
  CHECK(scalar(db, "select count(distinct problem_id || '/' || sample_index) from samples") == "12");
  CHECK(scalar(db, "select status from runs where id = 1") == "finished");
  // The samples stored before the kill are untouched.
  CHECK(scalar(db, "select group_concat(id || ':' || problem_id || '/' || sample_index) from samples where id <= " +
                       before) == first_ids);
  // Seeds come from the run seed: the same in the resumed part as a fresh run with that seed.
  CHECK(scalar(db, "select completion like '%seed %' from samples where id = 12") == "1");

  auto finished = run_cli({"run", "--resume", "1", "--generate-only", "--db", db}, env);
  check_one_error_line(finished, "already finished");
}

TEST_CASE("Ctrl-C stops a run as interrupted and it can be resumed") {
  TempDir tmp("interrupt");
  const std::string db = tmp / "results.db";
  const std::vector<std::string> env = {kTestPlugins};
  const pid_t pid =
      test::start_cli({"run", "--model", "test-slow", "--suite", "kernelbench-l1", "--kernelbench-root", kKernelBench,
                       "--samples", "3", "--set", "test-slow.delay_ms=150", "--generate-only", "--db", db},
                      env);
  int stored = 0;
  for (int i = 0; i < 200 && stored < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    auto q = results::run_query(db, "select count(*) from samples");
    if (q.ok() && !q->rows.empty()) stored = static_cast<int>(std::get<std::int64_t>(q->rows[0][0]));
  }
  kill(pid, SIGINT);
  CHECK(test::wait_cli(pid) == 130);
  CHECK(scalar(db, "select status from runs where id = 1") == "interrupted");
  auto resumed = run_cli({"run", "--resume", "1", "--generate-only", "--db", db}, env);
  REQUIRE_MESSAGE(resumed.exit_code == 0, resumed.err);
  CHECK(scalar(db, "select count(*) from samples") == "9");
}

TEST_CASE("a model failing midway marks the run failed and keeps what was stored") {
  TempDir tmp("fail");
  const std::string db = tmp / "results.db";
  auto r = run_cli({"run", "--model", "test-slow", "--suite", "kernelbench-l1", "--kernelbench-root", kKernelBench,
                    "--set", "test-slow.fail_at=10", "--set", "test-slow.no_block_at=2", "--generate-only", "--db", db},
                   {kTestPlugins});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("test-slow: failing on problem 10 as configured") != std::string::npos);
  CHECK(scalar(db, "select status from runs") == "failed");
  CHECK(scalar(db, "select count(*) from samples") == "2");
  CHECK(scalar(db, "select extraction from samples where problem_id = 2") == "no_code_block");
}

TEST_CASE("bad input gives one clear line and a non-zero exit and stores nothing") {
  TempDir tmp("bad");
  make_replay_folder(tmp / "replay");
  const std::string db = tmp / "results.db";
  const std::string replay = "replay:" + (tmp / "replay");
  auto base = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"run", "--generate-only", "--db", db};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_cli(args);
  };

  check_one_error_line(base({"--model", "replpay:x", "--suite", "kernelbench-l1", "--kernelbench-root", kKernelBench}),
                       "unknown model 'replpay:x'; did you mean 'replay'?");
  check_one_error_line(base({"--model", replay, "--suite", "kernelbench-l5", "--kernelbench-root", kKernelBench}),
                       "unknown suite 'kernelbench-l5'; did you mean");
  check_one_error_line(base({"--model", replay, "--suite", "kernelbench-l1", "--kernelbench-root", tmp / "nowhere"}),
                       "git clone");
  check_one_error_line(
      base({"--model", replay, "--suite", "kernelbench-l1", "--kernelbench-root", kKernelBench, "--problems", "1-3"}),
      "kernelbench-l1 has no problem 3");
  check_one_error_line(
      base({"--model", "replay:" + (tmp / "missing"), "--suite", "kernelbench-l1", "--kernelbench-root", kKernelBench}),
      tmp / "missing");
  write(tmp / "bad.toml", "model = \"dice-8b\"\nsuite = [\n");
  check_one_error_line(base({"--config", tmp / "bad.toml"}), tmp / "bad.toml" + ":2:");

  // A replay folder with a gap (samples 0 and 2 of problem 1).
  fs::create_directories(tmp / "gappy");
  write(tmp / "gappy/level_1_problem_1_sample_0_kernel.py", "x");
  write(tmp / "gappy/level_1_problem_1_sample_2_kernel.py", "x");
  check_one_error_line(
      base({"--model", "replay:" + (tmp / "gappy"), "--suite", "kernelbench-l1", "--kernelbench-root", kKernelBench}),
      "gap");
  check_one_error_line(run_cli({"run", "--model", replay, "--suite", "kernelbench-l1", "--kernelbench-root",
                                kKernelBench, "--set", "eval.device=tpu", "--db", db}),
                       "eval.device must be cpu or cuda");
  // A run stored by --generate-only is evaluated later with its stored settings: they are checked now.
  const std::vector<std::string> suite = {"--model",   replay, "--suite", "kernelbench-l1", "--kernelbench-root",
                                          kKernelBench};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = suite;
    args.insert(args.end(), extra.begin(), extra.end());
    return base(args);
  };
  check_one_error_line(with({"--set", "eval.timeout_s=abc"}),
                       "setting 'eval.timeout_s' must be a number from 1 to 604800, not 'abc'");
  check_one_error_line(with({"--set", "eval.sandbox=maybe"}), "eval.sandbox must be best, require or off, not 'maybe'");
  // A setting nobody reads is a typo, never silently ignored: the run's own, [eval]'s, a section's
  // name, and a key in the section of a plugin the run opens.
  check_one_error_line(with({"--problems", ""}), "empty problem selection");
  // The summary's file is written when the run ends: a path that cannot be written is refused first.
  check_one_error_line(with({"--json", tmp / "nowhere/summary.json"}),
                       "cannot write " + (tmp / "nowhere/summary.json") + ": no folder");
  check_one_error_line(with({"--json", tmp.path.string()}), "cannot write " + tmp.path.string() + ": it is a folder");
  write(tmp / "a-file", "x");
  check_one_error_line(base({"--model", replay, "--suite", "kernelbench-l1", "--kernelbench-root", tmp / "a-file"}),
                       "is a file, not a folder");
  check_one_error_line(with({"--set", "samplez=2"}), "unknown setting 'samplez' (did you mean 'samples'?)");
  check_one_error_line(with({"--set", "eval.timout_s=5"}),
                       "unknown setting 'eval.timout_s': the [eval] section has no such key "
                       "(did you mean 'eval.timeout_s'?)");
  check_one_error_line(with({"--set", "evl.trials=3"}), "setting 'evl.trials' is in no known section");
  check_one_error_line(
      with({"--set", "kernelbench.promt=zero_shot"}),
      "setting 'kernelbench.promt' is not one the kernelbench plugin reads (did you mean 'kernelbench.prompt'");
  write(tmp / "typo.toml", "[kernelbench]\npromt = \"zero_shot\"\n");
  check_one_error_line(with({"--config", tmp / "typo.toml"}), "setting 'kernelbench.promt' is not one");

  if (fs::exists(db)) CHECK(scalar(db, "select count(*) from runs") == "0");
  // The section of a model this run does not use may sit in a shared --config file.
  write(tmp / "shared.toml",
        "[openai]\nbase_url = \"http://localhost:8000/v1\"\n[kernelbench]\nprompt = \"zero_shot\"\n");
  CHECK(with({"--config", tmp / "shared.toml"}).exit_code == 0);
}

TEST_CASE("a newer or foreign database is refused and left as it was") {
  TempDir tmp("db");
  make_replay_folder(tmp / "replay");
  const std::vector<std::string> run = {"run",        "--model",         "replay:" + (tmp / "replay"),
                                        "--suite",    "kernelbench-l1",  "--kernelbench-root",
                                        kKernelBench, "--generate-only", "--db"};
  const std::string newer = tmp / "newer.db";
  {
    auto made = run_cli({"run", "--model", "replay:" + (tmp / "replay"), "--suite", "kernelbench-l1",
                         "--kernelbench-root", kKernelBench, "--generate-only", "--db", newer});
    REQUIRE(made.exit_code == 0);
  }
  {
    sqlite3* handle = nullptr;
    REQUIRE(sqlite3_open(newer.c_str(), &handle) == SQLITE_OK);
    CHECK(sqlite3_exec(handle, "PRAGMA journal_mode = DELETE; PRAGMA user_version = 99", nullptr, nullptr, nullptr) ==
          SQLITE_OK);
    sqlite3_close(handle);
  }
  const std::string hash = file_hash(newer);
  auto args = run;
  args.push_back(newer);
  check_one_error_line(run_cli(args), "newer");
  CHECK(file_hash(newer) == hash);
  check_one_error_line(run_cli({"report", "1", "--db", newer}), "newer");

  const std::string foreign = tmp / "notes.db";
  write(foreign, "these are my notes, not a database\n");
  args.back() = foreign;
  check_one_error_line(run_cli(args), foreign);
  CHECK(read_text(foreign) == "these are my notes, not a database\n");

  check_one_error_line(run_cli({"query", "select 1", "--db", tmp / "absent.db"}), "absent.db");
  CHECK_FALSE(fs::exists(tmp / "absent.db"));
  check_one_error_line(run_cli({"query", "delete from runs", "--db", newer}), "read-only");
  check_one_error_line(run_cli({"report", "5", "--db", tmp / "absent.db"}), "absent.db");
}

TEST_CASE("a flag a suite plugin declares sets its setting: over the config file, under --set, and again on resume") {
  TempDir tmp("suite-flag");
  const std::string db = tmp / "results.db";
  const std::vector<std::string> env = {suite_option_plugins()};
  const auto help = run_cli({"run", "--help"}, env);
  CHECK(help.exit_code == 0);
  CHECK_MESSAGE(help.out.find("Options of the testopts suite plugin") != std::string::npos, help.out);
  CHECK(help.out.find("--test-greeting TEXT") != std::string::npos);
  CHECK(help.out.find("(sets testopts.greeting)") != std::string::npos);
  CHECK(help.out.find("Options of the kernelbench suite plugin") != std::string::npos);
  CHECK(help.out.find("--kernelbench-root PATH") != std::string::npos);

  // The flag over the config file; the run fails at problem 2 (as configured) after storing problem 1.
  write(tmp / "run.toml", "[testopts]\ngreeting = \"from-file\"\n");
  const auto first =
      run_cli({"run", "--model", "test-slow", "--suite", "test-options", "--config", tmp / "run.toml",
               "--test-greeting", "hello", "--set", "test-slow.fail_at=2", "--generate-only", "--db", db},
              env);
  CHECK(first.exit_code == 1);
  CHECK(first.err.find("test-options: greeting 'hello'") != std::string::npos);
  CHECK(scalar(db, "select json_extract(config, '$.suite.greeting') from runs where id = 1") == "hello");
  CHECK(scalar(db, "select json_extract(config, '$.settings.\"testopts.greeting\"') from runs where id = 1") ==
        "hello");
  CHECK(scalar(db, "select count(*) from samples where run = 1") == "1");

  // On resume the flag replaces the stored value, as --kernelbench-root says where the suite is now.
  const auto resumed =
      run_cli({"run", "--resume", "1", "--test-greeting", "again", "--generate-only", "--db", db}, env);
  CHECK(resumed.err.find("test-options: greeting 'again'") != std::string::npos);

  // --set over the flag.
  const auto set = run_cli({"run", "--model", "test-slow", "--suite", "test-options", "--test-greeting", "hello",
                            "--set", "testopts.greeting=from-set", "--generate-only", "--db", db},
                           env);
  REQUIRE_MESSAGE(set.exit_code == 0, set.err);
  CHECK(scalar(db, "select json_extract(config, '$.suite.greeting') from runs where id = 2") == "from-set");
}

TEST_CASE("a flag two suite plugins declare, or one run has itself, stops the run with one line naming both") {
  TempDir tmp("suite-flag-clash");
  const std::string db = tmp / "results.db";
  const std::vector<std::string> run = {
      "run",   "--model",         "test-slow", "--suite", "test-options", "--test-greeting",
      "hello", "--generate-only", "--db",      db};
  const auto twice = run_cli(run, {suite_option_plugins("flag_clash")});
  check_one_error_line(twice, "--test-greeting is declared by two suite plugins, suite plugin 'testopts' (");
  CHECK(twice.err.find("suite_options/libdicebench-suite-testopts.so) and suite plugin 'testclash' (") !=
        std::string::npos);
  CHECK(twice.err.find("flag_clash/libdicebench-suite-testclash.so); remove one of them") != std::string::npos);
  const auto seed = run_cli(run, {suite_option_plugins("host_flag_clash")});
  check_one_error_line(seed, "suite plugin 'testseed' (");
  CHECK(seed.err.find(
            "host_flag_clash/libdicebench-suite-testseed.so) declares --seed, which is dicebench run's own flag") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(db));
}

TEST_CASE("--tolerance takes the tolerance modes and their old names, and nothing else") {
  TempDir tmp("tolerance");
  make_replay_folder(tmp / "replay");
  const std::string db = tmp / "results.db";
  for (const std::string mode : {"per_dtype", "uniform", "kernelbench", "compat"}) {
    const auto r = run_cli({"run", "--model", "replay:" + (tmp / "replay"), "--suite", "kernelbench-l1",
                            "--kernelbench-root", kKernelBench, "--tolerance", mode, "--generate-only", "--db", db});
    CHECK_MESSAGE(r.exit_code == 0, std::string(mode + ": " + r.err));
  }
  check_one_error_line(
      run_cli({"run", "--model", "replay:" + (tmp / "replay"), "--suite", "kernelbench-l1", "--kernelbench-root",
               kKernelBench, "--tolerance", "loose", "--generate-only", "--db", db}),
      "--tolerance: must be per_dtype or uniform (or the old names: kernelbench for per_dtype, compat for uniform), "
      "not 'loose'");
}

TEST_CASE(
    "a number out of range, an unknown command or option is one line naming what was given and the help to read") {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"run", "--samples", "0"}, "--samples: '0' is not a whole number from 1 to 1000000 (see dicebench run --help)"},
      // Not stored as the nearest number the option holds (9223372036854775807), nor wrapped around.
      {{"run", "--seed", "99999999999999999999"},
       "--seed: '99999999999999999999' is not a whole number from 0 to 9223372036854775807 (see dicebench run --help)"},
      {{"compare", "1", "2", "--seed", "-5"}, "--seed: '-5' is not a whole number from 0 to 18446744073709551615"},
      {{"show", "99999999999999999999"}, "'99999999999999999999' is not a whole number from 1 to"},
      {{"eval", "--problem", "p.py", "--candidate", "c.py", "--timeout", "abc"},
       "--timeout: 'abc' is not a number from 1 to 86400 (see dicebench eval --help)"},
      {{"compare", "1", "2", "--alpha", "0.9"}, "--alpha: '0.9' is not a number from 1e-09 to 0.5"},
      {{"rn"}, "dicebench has no command 'rn'; did you mean 'run'? (see dicebench --help)"},
      {{"bogus"}, "dicebench has no command 'bogus' (commands: run, eval, "},
      {{"baselines", "bogus"},
       "dicebench baselines has no command 'bogus' (commands: export) (see dicebench baselines --help)"},
      {{"--bogus"}, "dicebench has no option '--bogus'"},
      {{}, "no command given (commands: run, eval, "},
  };
  for (const auto& [args, message] : cases) {
    const auto r = run_cli(args);
    CHECK(r.exit_code == 2);
    check_one_error_line(r, message);
  }
}
