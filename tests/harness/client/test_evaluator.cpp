// The evaluator (harness/client/evaluator.hpp) driven through its C++ API, as the run's slot
// workers and the Python module drive it, on the CPU through real workers: a correct candidate and
// the figures it carries, the baseline it reuses, given or timed, prefetching and loading while
// the device is held, a candidate's failures (a load reply naming no verdict among them) as
// verdicts against a harness failure as an error, and the tolerance it was given.
#include "core/base/whole_file.hpp"
#include "harness/client/evaluator.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

using namespace dicebench;
using harness::Evaluator;

namespace {

const std::string kEval = std::string(DICEBENCH_TEST_DATA_DIR) + "/eval/";

std::string source(const std::string& name) {
  auto text = read_whole_file(kEval + name, "test file");
  REQUIRE_MESSAGE(text.ok(), (text ? std::string() : text.error().message));
  return *text;
}

// A folder of its own for a test's caches, removed at the end of the test binary.
std::string scratch_folder(const std::string& what) {
  static const std::filesystem::path root = [] {
    std::string pattern = (std::filesystem::temp_directory_path() / "dicebench-test-evaluator-XXXXXX").string();
    REQUIRE(mkdtemp(pattern.data()));
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(root, ec);
    });
    return std::filesystem::path(pattern);
  }();
  static int count = 0;
  const auto folder = root / (what + "-" + std::to_string(++count));
  std::filesystem::create_directories(folder);
  return folder.string();
}

int lines_of(const std::string& path) {
  std::ifstream in(path);
  int lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  return lines;
}

harness::EvaluationSettings cpu_settings() {
  harness::EvaluationSettings s;
  s.toolchain_cache = scratch_folder("toolchain");
  s.worker_executable = std::string(DICEBENCH_BUILD_DIR) + "/bin/dicebench-worker";
  s.sandbox.executable = std::string(DICEBENCH_BUILD_DIR) + "/bin/dicebench-sandbox";
  s.device = "cpu";
  s.fastpath = false;
  s.trials = 3;
  s.min_trials = 6;
  s.max_trials = 12;
  s.budget_seconds = 1.0;
  s.secret = 42;
  return s;
}

// An environment variable set (or unset, with nullptr) for a scope, restored at its end, a failed
// REQUIRE included.
struct ScopedEnv {
  std::string name;
  std::optional<std::string> saved;
  ScopedEnv(std::string variable, const char* value) : name(std::move(variable)) {
    if (const char* before = std::getenv(name.c_str())) saved = before;
    set(value);
  }
  void set(const char* value) const { value ? setenv(name.c_str(), value, 1) : unsetenv(name.c_str()); }
  ~ScopedEnv() { set(saved ? saved->c_str() : nullptr); }
};

const std::string kProblem = "problem_linear_relu.py";
const std::string kHash = "sha256:test-evaluator-linear-relu";

}  // namespace

TEST_CASE("a correct candidate carries its times, its speedup and the phases it went through") {
  Evaluator evaluator(cpu_settings());
  auto first = evaluator.evaluate(source(kProblem), kHash, source("correct.py"));
  REQUIRE_MESSAGE(first.ok(), (first ? std::string() : first.error().message));
  CHECK(first->verdict == Verdict::correct);
  CHECK(first->compiled);
  CHECK(first->correct);
  CHECK(first->failed_stage.empty());
  REQUIRE(first->runtime);
  REQUIRE(first->baseline);
  CHECK(first->runtime->trials >= 6);
  CHECK(first->runtime->trials <= 12);
  CHECK(first->runtime->median_ms > 0);
  REQUIRE(first->speedup);
  CHECK(*first->speedup == doctest::Approx(first->baseline->median_ms / first->runtime->median_ms));
  CHECK(first->baseline_measured);
  CHECK(first->max_abs_diff.value_or(1) < 1e-5);
  CHECK(first->io_bytes.inputs == 16 * 32 * 4);
  CHECK(first->io_bytes.outputs == 16 * 32 * 4);
  for (const char* phase : {"prepare", "trials", "timing", "baseline"})
    CHECK_MESSAGE(first->phases.count(phase) == 1, phase);

  // The same problem again: the baseline timed once is reused, not timed again.
  auto second = evaluator.evaluate(source(kProblem), kHash, source("correct.py"));
  REQUIRE(second.ok());
  CHECK(second->verdict == Verdict::correct);
  CHECK_FALSE(second->baseline_measured);
  REQUIRE(second->baseline);
  CHECK(second->baseline->median_ms == first->baseline->median_ms);
}

TEST_CASE("a baseline given from the results cache is used instead of timing one") {
  Evaluator evaluator(cpu_settings());
  Timing given;
  given.median_ms = given.mean_ms = 1000.0;
  given.trials = 7;
  evaluator.set_baseline(kHash, given);
  auto e = evaluator.evaluate(source(kProblem), kHash, source("correct.py"));
  REQUIRE_MESSAGE(e.ok(), (e ? std::string() : e.error().message));
  CHECK_FALSE(e->baseline_measured);
  REQUIRE(e->baseline);
  CHECK(e->baseline->median_ms == 1000.0);
  REQUIRE(e->speedup);
  CHECK(*e->speedup == doctest::Approx(1000.0 / e->runtime->median_ms));
}

TEST_CASE("a prefetched candidate loads ahead and is then judged like any other") {
  Evaluator evaluator(cpu_settings());
  const std::string wrong = source("wrong_shape.py");
  evaluator.prefetch(source(kProblem), wrong);
  auto e = evaluator.evaluate(source(kProblem), kHash, wrong);
  REQUIRE_MESSAGE(e.ok(), (e ? std::string() : e.error().message));
  CHECK(e->verdict == Verdict::shape_mismatch);
  CHECK(e->compiled);
  CHECK_FALSE(e->correct);
  CHECK(e->failed_trial == 0);
  CHECK(e->failed_stage == "trials");
  CHECK_FALSE(e->runtime);
  CHECK_FALSE(e->speedup);
}

TEST_CASE("a prefetched candidate loads after its problem's source, and one prefetched with another is not taken") {
  Evaluator evaluator(cpu_settings());
  // It subclasses the problem's Model, which it never defines. Prefetched with the matmul problem,
  // whose Model takes no arguments, it could not be built; asked for with the linear layer's, it
  // is loaded again, after that problem's source.
  const std::string subclass = source("subclasses_problem_model.py");
  evaluator.prefetch(source("problem_matmul.py"), subclass);
  auto other = evaluator.evaluate(source(kProblem), kHash, subclass);
  REQUIRE_MESSAGE(other.ok(), (other ? std::string() : other.error().message));
  CHECK_MESSAGE(other->verdict == Verdict::correct, other->error_message);
  evaluator.prefetch(source(kProblem), subclass);
  auto same = evaluator.evaluate(source(kProblem), kHash, subclass);
  REQUIRE_MESSAGE(same.ok(), (same ? std::string() : same.error().message));
  CHECK_MESSAGE(same->verdict == Verdict::correct, same->error_message);
}

TEST_CASE("submissions are judged as they load: a slow load holds up no one behind it") {
  harness::EvaluationSettings settings = cpu_settings();
  settings.prefetch = 3;
  Evaluator evaluator(settings);
  // Its module sleeps 40 s as it loads (as a long build would); the two behind it load at once.
  const std::string slow = "import time\ntime.sleep(40)\n" + source("correct.py");
  evaluator.submit({1, source(kProblem), kHash, slow});
  evaluator.submit({2, source(kProblem), kHash, source("wrong_shape.py")});
  evaluator.submit({3, source(kProblem), kHash, source("raises.py")});
  CHECK(evaluator.pending() == 3);
  std::vector<int64_t> order;
  std::map<int64_t, Verdict> verdicts;
  while (auto finished = evaluator.next([] { return false; })) {
    REQUIRE_MESSAGE(finished->evaluation.ok(),
                    (finished->evaluation ? std::string() : finished->evaluation.error().message));
    order.push_back(finished->tag);
    verdicts[finished->tag] = finished->evaluation->verdict;
  }
  REQUIRE(order.size() == 3);
  CHECK(order.back() == 1);  // the two behind it, in whichever order they loaded, then the slow one
  CHECK(verdicts[1] == Verdict::correct);
  CHECK(verdicts[2] == Verdict::shape_mismatch);
  CHECK(verdicts[3] == Verdict::runtime_error);
  CHECK(evaluator.pending() == 0);
}

TEST_CASE("a candidate's failures are verdicts, and a reference that cannot run is the harness's error") {
  Evaluator evaluator(cpu_settings());
  auto raises = evaluator.evaluate(source(kProblem), kHash, source("raises.py"));
  REQUIRE_MESSAGE(raises.ok(), (raises ? std::string() : raises.error().message));
  CHECK(raises->verdict == Verdict::runtime_error);
  CHECK_FALSE(raises->error_message.empty());

  auto syntax = evaluator.evaluate(source(kProblem), kHash, source("syntax_error.py"));
  REQUIRE(syntax.ok());
  CHECK(syntax->verdict == Verdict::compile_failed);
  CHECK_FALSE(syntax->compiled);

  // The problem itself raises: no candidate is to blame, and no verdict is made up.
  const std::string broken_problem =
      "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
      "        raise RuntimeError('reference broke')\n"
      "def get_inputs():\n    return [torch.randn(4)]\ndef get_init_inputs():\n    return []\n";
  auto broken = evaluator.evaluate(broken_problem, "sha256:test-evaluator-broken", source("correct.py"));
  CHECK_FALSE(broken.ok());
}

TEST_CASE("an evaluator that ends cleanly leaves no folder behind, and one whose reference died keeps its log") {
  // Its temporary folders (the workers' TMPDIR, the job folders' root) in a folder of the test's.
  const std::string root = scratch_folder("leftovers");
  const ScopedEnv tmpdir("TMPDIR", root.c_str());
  const auto left = [&] {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(root)) names.push_back(entry.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  };
  {
    auto settings = cpu_settings();
    settings.work_root = root;
    Evaluator evaluator(settings);
    auto e = evaluator.evaluate(source(kProblem), kHash, source("correct.py"));
    REQUIRE_MESSAGE(e.ok(), (e ? std::string() : e.error().message));
    CHECK(e->verdict == Verdict::correct);
  }
  // The reference's log folder and the reference's private folder (the problem's source) stayed
  // behind after every evaluation.
  CHECK_MESSAGE(left().empty(), fmt::format("left in {}: {}", root, fmt::join(left(), ", ")));
  {
    auto settings = cpu_settings();
    settings.work_root = root;
    Evaluator evaluator(settings);
    auto e = evaluator.evaluate("import os\nos._exit(3)\n", kHash + "-exits", source("correct.py"));
    CHECK_FALSE(e.ok());
  }
  const auto names = left();
  const bool log_kept = std::any_of(names.begin(), names.end(), [&](const std::string& name) {
    return name.ends_with("-logs") && std::filesystem::exists(root + "/" + name + "/reference.log");
  });
  CHECK_MESSAGE(log_kept, fmt::format("left in {}: {}", root, fmt::join(names, ", ")));
}

TEST_CASE("every worker's idle OpenBLAS threads sleep at once, unless the user set how long they spin") {
  // Each worker's import of torch (and numpy) starts one OpenBLAS thread per core; spinning 2^28
  // cycles each, they took 2.5 s of CPU per worker on a 16-core GPU host. A source that finds the
  // variable other than expected raises at its import: the reference's, and the candidate's.
  const auto requires_timeout = [](const std::string& value) {
    return "import os\nassert os.environ.get('OPENBLAS_THREAD_TIMEOUT') == '" + value +
           "', os.environ.get('OPENBLAS_THREAD_TIMEOUT')\n";
  };
  for (const std::string value : {"", "6"}) {
    CAPTURE(value);
    const ScopedEnv timeout("OPENBLAS_THREAD_TIMEOUT", value.empty() ? nullptr : value.c_str());
    const std::string expected = value.empty() ? harness::kOpenBlasThreadTimeout : value;
    Evaluator evaluator(cpu_settings());
    auto e = evaluator.evaluate(source(kProblem) + requires_timeout(expected), kHash + "-openblas-" + expected,
                                source("correct.py") + requires_timeout(expected));
    REQUIRE_MESSAGE(e.ok(), (e ? std::string() : e.error().message));
    CHECK_MESSAGE(e->verdict == Verdict::correct, e->error_message);
  }
}

TEST_CASE("a candidate worker that dies in its own start-up is the harness's error, not a verdict on the candidate") {
  // Its job's memory limit is far below what the worker's start-up (Python, torch) takes: it is
  // killed before its hello, before the candidate's code could reach it. Charged to the candidate,
  // a broken start-up (a sandbox that keeps CUDA from starting) would store every candidate crashed.
  harness::EvaluationSettings settings = cpu_settings();
  settings.sandbox.memory_max_bytes = 48ull << 20;
  Evaluator evaluator(settings);
  auto e = evaluator.evaluate(source(kProblem), kHash, source("correct.py"));
  REQUIRE_FALSE_MESSAGE(e.ok(), "judged as verdict " << (e ? static_cast<int>(e->verdict) : -1));
  CHECK_MESSAGE(e.error().message.find("the candidate's worker did not start") != std::string::npos, e.error().message);
}

TEST_CASE(
    "a load reply naming no verdict is the candidate's breach, where its problem's checks are done as where not") {
  for (const bool traits_known : {false, true}) {
    Evaluator evaluator(cpu_settings());
    if (traits_known) evaluator.set_traits(kHash, {});  // the failed load is then judged without the reference
    auto e = evaluator.evaluate(source(kProblem), kHash, source("rewrites_load_verdict.py"));
    REQUIRE_MESSAGE(e.ok(), (e ? std::string() : e.error().message));
    CHECK(e->verdict == Verdict::crashed);
    CHECK(e->error_message.find("broke the protocol") != std::string::npos);
    CHECK(e->phases.count("prepare") == (traits_known ? 0 : 1));
  }
}

TEST_CASE("the tolerance the evaluator is given decides a near miss") {
  auto strict = cpu_settings();
  Evaluator strict_evaluator(strict);
  auto off = strict_evaluator.evaluate(source(kProblem), kHash, source("off_by_1e3.py"));
  REQUIRE_MESSAGE(off.ok(), (off ? std::string() : off.error().message));
  CHECK(off->verdict == Verdict::output_mismatch);
  REQUIRE(off->margin);
  CHECK(*off->margin > 1.0);

  auto loose = cpu_settings();
  loose.tolerance = ToleranceMode::uniform;
  Evaluator loose_evaluator(loose);
  auto passes = loose_evaluator.evaluate(source(kProblem), kHash, source("off_by_1e3.py"));
  REQUIRE(passes.ok());
  CHECK(passes->verdict == Verdict::correct);
  REQUIRE(passes->margin);
  CHECK(*passes->margin <= 1.0);
}

TEST_CASE(
    "torch's toolchain gets half the cores, a set size wins, and its builds yield only while candidates are timed") {
  CHECK(harness::default_toolchain_jobs(16) == 8);
  CHECK(harness::default_toolchain_jobs(1) == 1);
  CHECK(harness::default_toolchain_jobs(0) == 1);
  harness::EvaluationSettings settings = cpu_settings();
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  settings.timing = false;
  CHECK(harness::toolchain_build_settings(settings).jobs == std::max(1, cores / 2));
  CHECK(harness::toolchain_build_settings(settings).niceness == 0);
  settings.timing = true;
  CHECK(harness::toolchain_build_settings(settings).jobs == std::max(1, cores / 2));
  CHECK(harness::toolchain_build_settings(settings).niceness == harness::kTimedBuildNiceness);
  settings.toolchain_jobs = 3;
  CHECK(harness::toolchain_build_settings(settings).jobs == 3);
}

TEST_CASE("a slow build with torch's toolchain holds up no other verdict, and its failure is never built again") {
  // A stand-in toolchain worker: each build fails as nvcc would, once the test opens its gate.
  const std::string folder = scratch_folder("fake");
  const std::string log = folder + "/builds.log", gate = folder + "/gate";
  setenv("FAKE_TOOLCHAIN_LOG", log.c_str(), 1);
  setenv("FAKE_TOOLCHAIN_OUTCOME", "fail", 1);
  setenv("FAKE_TOOLCHAIN_SECONDS", "0", 1);
  setenv("FAKE_TOOLCHAIN_GATE", gate.c_str(), 1);
  harness::EvaluationSettings settings = cpu_settings();
  settings.prefetch = 3;
  harness::ToolchainBuildSettings fake = harness::toolchain_build_settings(settings);
  fake.worker_executable = std::string(DICEBENCH_SOURCE_DIR) + "/tests/harness/client/fake_toolchain_worker.py";
  setenv("FAKE_TOOLCHAIN_SPEC_DIR", DICEBENCH_BUILD_DIR "/lib/dicebench/python", 1);
  fake.sandbox.mode = "off";
  settings.toolchain_builds = std::make_shared<harness::ToolchainBuilds>(fake);
  Evaluator evaluator(settings);
  const std::string built = source("cpp_inline_relu.py");
  evaluator.submit({1, source(kProblem), kHash, built});
  evaluator.submit({2, source(kProblem), kHash, source("correct.py")});
  evaluator.submit({3, source(kProblem), kHash, source("wrong_shape.py")});
  // The build stays open until both others are judged: were they to wait for it, this would not
  // end before the stand-in gives up its gate (120 s), and the order below would fail.
  std::vector<int64_t> order;
  std::map<int64_t, Evaluation> done;
  while (auto finished = evaluator.next([] { return false; })) {
    REQUIRE_MESSAGE(finished->evaluation.ok(),
                    (finished->evaluation ? std::string() : finished->evaluation.error().message));
    order.push_back(finished->tag);
    done.emplace(finished->tag, std::move(*finished->evaluation));
    if (order.size() == 2) std::ofstream(gate) << "open\n";
  }
  CHECK(order == std::vector<int64_t>{order[0], order[1], 1});
  CHECK(done.at(2).verdict == Verdict::correct);
  CHECK(done.at(3).verdict == Verdict::shape_mismatch);
  const Evaluation& failed = done.at(1);
  CHECK(failed.verdict == Verdict::compile_failed);
  CHECK_FALSE(failed.compiled);
  CHECK(failed.error_message.find("Error building extension 'dicebench_test_cpp_relu'") != std::string::npos);
  REQUIRE(failed.toolchain);
  CHECK(failed.toolchain->at("builds") == 1);
  CHECK(failed.toolchain->at("cache_hits") == 0);
  CHECK(lines_of(log) == 1);

  // The same sources again (another sample, a resume): the cached failure, without a build (the
  // gate is closed again: a build would wait 120 s for it).
  std::filesystem::remove(gate);
  const auto again_started = std::chrono::steady_clock::now();
  auto again = evaluator.evaluate(source(kProblem), kHash, "# another sample\n" + built);
  REQUIRE_MESSAGE(again.ok(), (again ? std::string() : again.error().message));
  CHECK(again->verdict == Verdict::compile_failed);
  REQUIRE(again->toolchain);
  CHECK(again->toolchain->at("cache_hits") == 1);
  CHECK(lines_of(log) == 1);
  CHECK(std::chrono::steady_clock::now() - again_started < std::chrono::seconds(100));
  unsetenv("FAKE_TOOLCHAIN_GATE");
}

TEST_CASE("candidates go on loading while the device is held, and the caller submits ahead of them") {
  // A stand-in toolchain worker whose builds fail at once; the line its build writes in `log` is
  // what the first candidate waits for on the device.
  const std::string folder = scratch_folder("held");
  const std::string log = folder + "/builds.log";
  setenv("FAKE_TOOLCHAIN_LOG", log.c_str(), 1);
  setenv("FAKE_TOOLCHAIN_OUTCOME", "fail", 1);
  setenv("FAKE_TOOLCHAIN_SECONDS", "0", 1);
  unsetenv("FAKE_TOOLCHAIN_GATE");
  harness::EvaluationSettings settings = cpu_settings();
  settings.prefetch = 1;  // one candidate loading at a time
  settings.candidate_timeout = std::chrono::seconds(40);
  settings.sandbox.read_only.push_back(folder);  // the candidates see the build log
  harness::ToolchainBuildSettings fake = harness::toolchain_build_settings(settings);
  fake.worker_executable = std::string(DICEBENCH_SOURCE_DIR) + "/tests/harness/client/fake_toolchain_worker.py";
  setenv("FAKE_TOOLCHAIN_SPEC_DIR", DICEBENCH_BUILD_DIR "/lib/dicebench/python", 1);
  fake.sandbox.mode = "off";
  settings.toolchain_builds = std::make_shared<harness::ToolchainBuilds>(fake);
  Evaluator evaluator(settings);
  // Its forward holds the device until a build has started: the build of the third candidate,
  // which can start only once the second has loaded and the third been launched meanwhile. Were
  // launches to wait for the device, it would run to its time limit (a timeout verdict).
  const std::string holds =
      "import os, time\nimport torch\nimport torch.nn as nn\n\nLOG = '" + log +
      "'\n\nclass ModelNew(nn.Module):\n    def __init__(self, features):\n"
      "        super().__init__()\n        self.linear = nn.Linear(features, features)\n\n"
      "    def forward(self, x):\n        while not os.path.exists(LOG):\n            time.sleep(0.05)\n"
      "        return torch.clamp(x @ self.linear.weight.t() + self.linear.bias, min=0.0)\n";
  std::deque<Evaluator::Submission> todo = {{1, source(kProblem), kHash, holds},
                                            {2, source(kProblem), kHash, source("wrong_shape.py")},
                                            {3, source(kProblem), kHash, source("cpp_inline_relu.py")},
                                            {4, source(kProblem), kHash, source("raises.py")}};
  // The caller's loop, as the run's slots drive the evaluator: submit while it wants more, then next.
  std::vector<int64_t> order;
  std::vector<size_t> submitted_before;  // submissions made before each verdict
  std::map<int64_t, Evaluation> done;
  size_t submitted = 0;
  int builds_at_first_verdict = -1;
  while (true) {
    while (!todo.empty() && evaluator.wants_more()) {
      evaluator.submit(todo.front());
      todo.pop_front();
      ++submitted;
    }
    auto finished = evaluator.next([] { return false; });
    if (!finished) break;
    REQUIRE_MESSAGE(finished->evaluation.ok(),
                    (finished->evaluation ? std::string() : finished->evaluation.error().message));
    if (order.empty()) builds_at_first_verdict = lines_of(log);
    order.push_back(finished->tag);
    submitted_before.push_back(submitted);
    done.emplace(finished->tag, std::move(*finished->evaluation));
  }
  REQUIRE(order.size() == 4);
  // Three taken at once (one loading place and two for loaded candidates), the fourth once one was judged.
  CHECK(submitted_before.front() == 3);
  CHECK(order.front() == 1);
  CHECK_MESSAGE(done.at(1).verdict == Verdict::correct, done.at(1).error_message);
  CHECK(builds_at_first_verdict == 1);
  CHECK(done.at(2).verdict == Verdict::shape_mismatch);
  CHECK(done.at(3).verdict == Verdict::compile_failed);
  CHECK(done.at(4).verdict == Verdict::runtime_error);
  // The second had loaded while the first was judged: the device did not wait for it.
  CHECK(done.at(2).phases.count("compile_wait") == 1);
  CHECK(done.at(2).phases["compile_wait"] < 0.5);
  CHECK(done.at(2).phases["slot_wait"] < 0.5);
}

TEST_CASE("a problem's reference is built once for all its candidates, and a candidate that did not load needs none") {
  const std::string log = scratch_folder("builds") + "/reference.log";
  setenv("DICEBENCH_TEST_BUILD_LOG", log.c_str(), 1);
  Evaluator evaluator(cpu_settings());
  const std::string problem = source("problem_counts_builds.py");
  const std::string hash = "sha256:counts-builds";
  auto first = evaluator.evaluate(problem, hash, source("correct.py"));
  REQUIRE_MESSAGE(first.ok(), (first ? std::string() : first.error().message));
  CHECK(first->verdict == Verdict::correct);
  CHECK(first->traits_measured);
  CHECK(first->baseline_measured);
  auto second = evaluator.evaluate(problem, hash, "# another sample\n" + source("correct.py"));
  REQUIRE(second.ok());
  CHECK(second->verdict == Verdict::correct);
  CHECK_FALSE(second->traits_measured);
  CHECK_FALSE(second->baseline_measured);
  auto wrong = evaluator.evaluate(problem, hash, source("wrong_shape.py"));
  REQUIRE(wrong.ok());
  CHECK(wrong->verdict == Verdict::shape_mismatch);
  CHECK(lines_of(log) == 1);  // Model() ran once in the reference worker: the others copied it
  auto syntax = evaluator.evaluate(problem, hash, source("syntax_error.py"));
  REQUIRE(syntax.ok());
  CHECK(syntax->verdict == Verdict::compile_failed);
  CHECK_FALSE(syntax->phases.count("prepare"));  // the reference was not asked for anything
  CHECK(syntax->problem_traits);
  CHECK(lines_of(log) == 1);
  unsetenv("DICEBENCH_TEST_BUILD_LOG");
}

TEST_CASE(
    "torch's toolchain builds a candidate's load_inline call in the pool, once, and later ones load the cached "
    "module") {
  Evaluator evaluator(cpu_settings());
  auto built = evaluator.evaluate(source(kProblem), kHash, source("cpp_inline_relu.py"));
  REQUIRE_MESSAGE(built.ok(), (built ? std::string() : built.error().message));
  CHECK_MESSAGE(built->verdict == Verdict::correct, built->error_message);
  REQUIRE(built->compile);
  CHECK(built->compile->path == "fallback");
  REQUIRE(built->toolchain);
  CHECK(built->toolchain->at("builds") == 1);
  CHECK(built->toolchain->at("cache_hits") == 0);
  auto cached = evaluator.evaluate(source(kProblem), kHash, "# another sample\n" + source("cpp_inline_relu.py"));
  REQUIRE(cached.ok());
  CHECK_MESSAGE(cached->verdict == Verdict::correct, cached->error_message);
  REQUIRE(cached->toolchain);
  CHECK(cached->toolchain->at("cache_hits") == 1);
  CHECK(cached->toolchain->at("build_seconds").get<double>() == 0.0);
}

TEST_CASE(
    "timed calls come in batches made ahead, each timed trial after a warm call, and timing says why it stopped") {
  Evaluator evaluator(cpu_settings());
  auto e = evaluator.evaluate(source(kProblem), kHash, source("correct.py"));
  REQUIRE_MESSAGE(e.ok(), (e ? std::string() : e.error().message));
  REQUIRE(e->verdict == Verdict::correct);
  REQUIRE(e->runtime);
  const auto& t = *e->runtime;
  CHECK(t.warm_calls == t.trials);  // CPU calls are far under the 5 ms above which warm calls stop
  // Every call the loop made (warm-up, warm and timed) went through the host, and a few checked
  // ones after it where too few of them were checked.
  CHECK(e->timed_calls.calls >= cpu_settings().warmup + t.trials + t.warm_calls);
  CHECK(e->timed_calls.calls <= cpu_settings().warmup + t.trials + t.warm_calls + 3);
  CHECK(e->timed_calls.checked >= 3);
  CHECK(e->timed_calls.checked * 10 >= e->timed_calls.calls);
  CHECK(e->timed_calls.batches >= 1);
  CHECK(e->timed_calls.batches <= (e->timed_calls.calls + 31) / 32 + 1);
  CHECK((t.stop_reason == "converged" || t.stop_reason == "max_trials" || t.stop_reason == "budget"));
  REQUIRE(e->baseline);
  CHECK(e->baseline->warm_calls == e->baseline->trials);
  CHECK(!e->baseline->stop_reason.empty());

  auto cold = cpu_settings();
  cold.warm_calls = false;
  Evaluator without(cold);
  auto off = without.evaluate(source(kProblem), kHash, source("correct.py"));
  REQUIRE_MESSAGE(off.ok(), (off ? std::string() : off.error().message));
  REQUIRE(off->runtime);
  CHECK(off->runtime->warm_calls == 0);
  CHECK(off->timed_calls.calls >= cold.warmup + off->runtime->trials);
  CHECK(off->timed_calls.calls <= cold.warmup + off->runtime->trials + 3);
}

TEST_CASE("a stable candidate stops timing at its spread, not at its budget") {
  auto s = cpu_settings();
  s.min_trials = 6;
  s.max_trials = 1000;
  s.budget_seconds = 30;
  s.target_rel_ci = 0.5;  // any CPU timing is this stable
  Evaluator evaluator(s);
  auto e = evaluator.evaluate(source(kProblem), kHash, source("correct.py"));
  REQUIRE_MESSAGE(e.ok(), (e ? std::string() : e.error().message));
  REQUIRE(e->runtime);
  CHECK(e->runtime->stop_reason == "converged");
  // Far below max_trials: a check that it stopped early, not of how noisy the machine is (a busy
  // 2-core CI machine took 23 trials to converge, an idle one under 20).
  CHECK(e->runtime->trials < 100);
  CHECK(e->phases.at("timing") < 15);
}

TEST_CASE("with a batch budget smaller than a call, every call is a batch of its own, and a stale answer still fails") {
  auto s = cpu_settings();
  s.batch_bytes = 1;
  Evaluator evaluator(s);
  auto honest = evaluator.evaluate(source(kProblem), kHash, source("correct.py"));
  REQUIRE_MESSAGE(honest.ok(), (honest ? std::string() : honest.error().message));
  CHECK(honest->verdict == Verdict::correct);
  CHECK(honest->timed_calls.batches == honest->timed_calls.calls);
  // A cache keyed on the input's shape answers stale once the correctness trials are over: a checked
  // timed call catches it, in batches of one as in batches of many.
  for (const int64_t budget : {int64_t{1}, int64_t{4} << 30}) {
    auto settings = cpu_settings();
    settings.batch_bytes = budget;
    Evaluator stale_evaluator(settings);
    auto stale = stale_evaluator.evaluate(source(kProblem), kHash, source("shape_keyed_cache.py"));
    REQUIRE_MESSAGE(stale.ok(), (stale ? std::string() : stale.error().message));
    CHECK(stale->verdict == Verdict::output_mismatch);
    CHECK(stale->failed_stage == "timing");
    REQUIRE(stale->failed_call);
    CHECK(stale->error_message.rfind("timed call " + std::to_string(*stale->failed_call) + ":", 0) == 0);
    if (budget > 1) CHECK(stale->timed_calls.batches < stale->timed_calls.calls);
  }
}

TEST_CASE("a trial and a checked timed call get their inputs placed fresh, and an honest candidate stays correct") {
  // The CUDA case, a graph replayed on its first call's input pointers, is in test_eval_gpu; on the
  // CPU the inputs' addresses already vary, and the placement itself is tested in test_placement.py.
  Evaluator evaluator(cpu_settings());
  auto honest = evaluator.evaluate(source(kProblem), kHash, source("correct.py"));
  REQUIRE_MESSAGE(honest.ok(), (honest ? std::string() : honest.error().message));
  CHECK(honest->verdict == Verdict::correct);
  CHECK(honest->timed_calls.fresh_placements >= 2);  // a trial and a checked timed call at least
  CHECK(honest->timed_calls.fresh_placements < honest->timed_calls.calls + 4);
}

TEST_CASE("evaluators sharing a GPU's gate: a hang holds its own slot only, and timing waits to have it alone") {
  // Two evaluators share one gate, as eval.gpu_slots=2 makes them share a GPU (here on the CPU,
  // where the gate works the same). One judges a candidate that never returns.
  auto gate = std::make_shared<harness::DeviceGate>(2);
  auto hanging_settings = cpu_settings();
  hanging_settings.device_gate = gate;
  hanging_settings.timing = false;
  hanging_settings.candidate_timeout = std::chrono::seconds(45);  // outlasts a loaded machine's worker start-up
  Evaluator hanging(hanging_settings);
  using Clock = std::chrono::steady_clock;
  Clock::time_point hang_ended;
  auto hang = std::async(std::launch::async, [&] {
    auto e = hanging.evaluate(source(kProblem), kHash, source("hangs.py"));
    hang_ended = Clock::now();
    return e;
  });
  const auto hang_judged = [&] {
    auto e = hang.get();
    REQUIRE_MESSAGE(e.ok(), (e ? std::string() : e.error().message));
    CHECK(e->verdict == Verdict::timeout);
  };
  // Once the hanging candidate holds its share of the GPU (its checks have started):
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (gate->shared_now() == 0 && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE(gate->shared_now() == 1);

  // An untimed candidate is judged beside it, while the hang still holds its share.
  auto untimed_settings = cpu_settings();
  untimed_settings.device_gate = gate;
  untimed_settings.timing = false;
  Evaluator untimed(untimed_settings);
  auto beside = untimed.evaluate(source(kProblem), kHash, source("correct.py"));
  REQUIRE_MESSAGE(beside.ok(), (beside ? std::string() : beside.error().message));
  CHECK(beside->verdict == Verdict::correct);
  CHECK(gate->shared_now() == 1);
  CHECK(hang.wait_for(std::chrono::seconds(0)) == std::future_status::timeout);
  // A timed candidate's timing waits until the hang has ended.
  auto timed_settings = cpu_settings();
  timed_settings.device_gate = gate;
  Evaluator timed(timed_settings);
  auto after = timed.evaluate(source(kProblem), kHash, source("correct.py"));
  const auto judged = Clock::now();
  REQUIRE_MESSAGE(after.ok(), (after ? std::string() : after.error().message));
  CHECK(after->verdict == Verdict::correct);
  REQUIRE(after->runtime);
  hang_judged();
  CHECK(judged > hang_ended);
}
