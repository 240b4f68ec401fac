// Integration tests of the openai: model plugin through the dicebench CLI, against a real HTTP
// server on 127.0.0.1 (openai_test_server.py, the project's Python, a free port): the happy path,
// retries and Retry-After, concurrency, the request cache on a re-run, a missing key, an unreachable
// server, bad replies, and a resume after kill -9. Nothing leaves the machine.
#include "tests/core/cli/cli_runner.hpp"
#include "tests/test_files.hpp"

#include <doctest/doctest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>

using namespace dicebench;
using namespace dicebench::test;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

extern char** environ;

namespace {

const std::string kKernelBench = std::string(DICEBENCH_TEST_DATA_DIR) + "/kernelbench";
const std::string kServerScript = std::string(DICEBENCH_SOURCE_DIR) + "/tests/models/openai/openai_test_server.py";
const std::string kKey = "sk-dicebench-test-5ec7e7-never-stored";
const std::string kKeyVariable = "DICEBENCH_TEST_OPENAI_KEY";

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The test server, started on a free port (or `port`) and stopped (by its pid) at the end; stop()
// and start() again on the same port make a server that goes away and comes back.
class TestServer {
 public:
  TestServer(const TempDir& dir, const std::vector<std::string>& options, int port = 0)
      : dir_(dir.path),
        name_("server-" + std::to_string(++count_)),
        stats_(dir / (name_ + "-stats.json")),
        options_(options) {
    start(port);
  }
  ~TestServer() { stop(); }
  // Starts (again) on `port` (0: a free one), with the options it was made with or `options`.
  void start(int port = 0, const std::optional<std::vector<std::string>>& options = std::nullopt) {
    if (options) options_ = *options;
    const std::string port_file = (dir_ / (name_ + "-port")).string();
    fs::remove(port_file);
    std::vector<std::string> args = {DICEBENCH_PYTHON, kServerScript, "--port-file", port_file, "--stats",
                                     stats_,           "--key",       kKey,          "--port",  std::to_string(port)};
    args.insert(args.end(), options_.begin(), options_.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    REQUIRE(posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) == 0);
    pids_.push_back(pid);
    for (int i = 0; i < 200 && !fs::exists(port_file); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    REQUIRE_MESSAGE(fs::exists(port_file), "the test server did not start");
    port_ = std::stoi(slurp(port_file));
  }
  // Stops every process this server started (one of them may linger after a "shutdown" reply).
  void stop() {
    for (const pid_t pid : pids_) {
      kill(pid, SIGTERM);
      waitpid(pid, nullptr, 0);
    }
    pids_.clear();
  }
  int port() const { return port_; }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  nlohmann::json stats() const { return nlohmann::json::parse(slurp(stats_)); }
  int chat_requests() const { return stats().at("chat_requests").get<int>(); }

 private:
  static inline int count_ = 0;  // each server of a test has files of its own
  fs::path dir_;
  std::string name_;
  std::string stats_;
  std::vector<std::string> options_;
  std::vector<pid_t> pids_;
  int port_ = 0;
};

// A run of the openai model on the three level-1 test problems, generating only.
std::vector<std::string> run_args(const TestServer& server, const std::string& db,
                                  const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"run",
                                   "--model",
                                   "openai:test-model",
                                   "--suite",
                                   "kernelbench-l1",
                                   "--kernelbench-root",
                                   kKernelBench,
                                   "--generate-only",
                                   "--db",
                                   db,
                                   "--seed",
                                   "3",
                                   "--set",
                                   "openai.base_url=" + server.base_url(),
                                   "--set",
                                   "openai.api_key_env=" + kKeyVariable};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

const std::vector<std::string> kEnv = {kKeyVariable + "=" + kKey};

// Answers in a request cache file (not a results database, so read with SQLite directly).
int cache_answers(const std::string& path) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, "SELECT count(*) FROM answers", -1, &stmt, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(stmt) == SQLITE_ROW);
  const int count = sqlite3_column_int(stmt, 0);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return count;
}

void execute(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  CHECK(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
}

int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  socklen_t size = sizeof(address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size);
  close(fd);
  return ntohs(address.sin_port);
}

}  // namespace

TEST_CASE(
    "openai: a run stores completions with finish reason, tokens and latency - the key is never stored or printed") {
  TempDir tmp("openai-happy");
  TestServer server(tmp, {});
  const std::string db = tmp / "results.db";
  const auto r = run_cli(run_args(server, db, {"--samples", "2", "--set", "openai.seed=sample"}), kEnv);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(server.chat_requests() == 6);
  CHECK(server.stats().at("authorized") == 6);  // the key went out, as a bearer token
  CHECK(server.stats().at("streamed") == 6);    // as server-sent events
  CHECK(scalar(db, "select count(*) from samples where candidate like 'class ModelNew:%'") == "6");
  CHECK(
      scalar(
          db,
          "select count(*) from samples where json_extract(gen_stats, '$.finish_reason') = 'stop' "
          "and json_extract(gen_stats, '$.prompt_tokens') > 0 and json_extract(gen_stats, '$.completion_tokens') = 10 "
          "and json_extract(gen_stats, '$.latency_s') > 0 and json_extract(gen_stats, '$.cached') = 0") == "6");
  // Different seeds per sample give different completions.
  CHECK(scalar(db, "select count(distinct completion) from samples") == "6");
  CHECK(r.out.find("tokens: ") != std::string::npos);
  CHECK(r.out.find(" 60 completion; ") != std::string::npos);
  CHECK(r.out.find("completion tokens/s") != std::string::npos);
  CHECK(scalar(db, "select json_extract(config, '$.model.served_model') from runs") == "test-model");

  for (const std::string& text : {r.out, r.err, slurp(db), slurp(db + ".openai-cache.sqlite")})
    CHECK(text.find(kKey) == std::string::npos);
  for (const auto& entry : fs::directory_iterator(tmp.path))
    CHECK_MESSAGE(slurp(entry.path().string()).find(kKey) == std::string::npos, entry.path());
}

TEST_CASE("openai: a re-run is answered from the request cache - changed settings or cache=off ask again") {
  TempDir tmp("openai-cache");
  TestServer server(tmp, {"--delay", "0.2"});
  const std::string db = tmp / "results.db";
  const auto first_start = Clock::now();
  const auto first = run_cli(run_args(server, db, {"--samples", "2"}), kEnv);
  const double first_s = std::chrono::duration<double>(Clock::now() - first_start).count();
  REQUIRE_MESSAGE(first.exit_code == 0, first.err);
  CHECK(server.chat_requests() == 6);

  const auto again_start = Clock::now();
  const auto again = run_cli(run_args(server, db, {"--samples", "2"}), kEnv);
  const double again_s = std::chrono::duration<double>(Clock::now() - again_start).count();
  REQUIRE_MESSAGE(again.exit_code == 0, again.err);
  CHECK(server.chat_requests() == 6);                // nothing sent
  CHECK(server.stats().at("models_requests") == 1);  // nor was the server even asked for its models
  CHECK(again.out.find("request cache: 6 answer(s)") != std::string::npos);
  CHECK(scalar(db, "select count(*) from samples where run = 2 and json_extract(gen_stats, '$.cached') = 1") == "6");
  CHECK(scalar(db,
               "select count(*) from samples as a join samples as b on a.problem_id = b.problem_id and "
               "a.sample_index = b.sample_index and a.run = 1 and b.run = 2 and a.completion = b.completion") == "6");
  MESSAGE("first run " << first_s << " s (6 requests), re-run " << again_s << " s (0 requests)");

  // A changed setting changes the request body, so the key: no stored answer is reused.
  const auto hotter = run_cli(run_args(server, db, {"--samples", "2", "--set", "openai.temperature=0.9"}), kEnv);
  REQUIRE_MESSAGE(hotter.exit_code == 0, hotter.err);
  CHECK(server.chat_requests() == 12);
  const auto uncached = run_cli(run_args(server, db, {"--samples", "2", "--set", "openai.cache=off"}), kEnv);
  REQUIRE_MESSAGE(uncached.exit_code == 0, uncached.err);
  CHECK(server.chat_requests() == 18);
  CHECK(scalar(db, "select count(*) from samples where run = 4 and json_extract(gen_stats, '$.cached') = 0") == "6");
}

TEST_CASE(
    "openai: 429 with Retry-After, 500, timeouts and dropped connections are retried - a 400 is not and fails its "
    "sample alone") {
  TempDir tmp("openai-retry");
  {
    // Backoff alone would wait 0.25-0.5 s and 0.5-1 s before the second and third attempts.
    TestServer server(tmp, {"--script", "429,500", "--retry-after", "2"});
    const std::string db = tmp / "retry.db";
    const auto start = Clock::now();
    const auto r = run_cli(run_args(server, db, {"--problems", "1"}), kEnv);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(server.chat_requests() == 3);
    CHECK(seconds >= 2.25);  // Retry-After: 2, then at least 0.25 s of backoff
    // Each wave of retries is told without -v: what failed, how long, how much longer.
    CHECK_MESSAGE(r.err.find("openai: retrying 1 request(s) after: HTTP 429; the oldest has been retried for ") !=
                      std::string::npos,
                  r.err);
    CHECK(r.err.find("s more (openai.retry_window_s = 180 s)") != std::string::npos);
    CHECK(r.out.find(", 1 problem, 1 sample\n") != std::string::npos);
    CHECK(scalar(db, "select count(*) from samples where candidate is not null") == "1");
    CHECK(scalar(db, "select json_extract(gen_stats, '$.attempts') from samples") == "3");
  }
  {
    // A timeout and a dropped connection are retried too.
    TestServer server(tmp, {"--script", "slow,drop"});
    const std::string db = tmp / "timeout.db";
    const auto start = Clock::now();
    const auto r = run_cli(run_args(server, db, {"--problems", "1", "--set", "openai.timeout_s=0.5"}), kEnv);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(server.chat_requests() == 3);
    CHECK(seconds < 3.0);  // the slow reply was not waited for
    CHECK(scalar(db, "select json_extract(gen_stats, '$.attempts') from samples") == "3");
    CHECK(scalar(db, "select count(*) from samples where candidate is not null") == "1");
  }
  {
    // A 500 past the last retry is no sample result: nothing is stored, the run stops interrupted.
    TestServer server(tmp, {"--script", "500,500"});
    const std::string db = tmp / "exhausted.db";
    const auto r = run_cli(run_args(server, db, {"--problems", "1", "--set", "openai.max_retries=1"}), kEnv);
    check_one_error_line(r,
                         "run 1 interrupted: openai: the server stopped answering: HTTP 500 from the server after 2 "
                         "attempts: 'the server broke'");
    CHECK(server.chat_requests() == 2);
    CHECK(scalar(db, "select count(*) from samples") == "0");
    CHECK(scalar(db, "select status from runs") == "interrupted");
  }
  {
    TestServer server(tmp, {"--script", "400"});
    const std::string db = tmp / "refused.db";
    const auto r = run_cli(run_args(server, db, {"--set", "openai.concurrency=1"}), kEnv);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(server.chat_requests() == 3);  // not retried
    CHECK(scalar(db, "select json_extract(gen_stats, '$.error') from samples where problem_id = 1") ==
          "HTTP 400 from the server: 'this model's context is too short'");
    CHECK(scalar(db, "select json_extract(gen_stats, '$.http_status') from samples where problem_id = 1") == "400");
    CHECK(scalar(db, "select count(*) from samples where candidate is not null") == "2");
    CHECK(scalar(db, "select status from runs") == "finished");
    CHECK(r.out.find("failed requests: 1") != std::string::npos);
    CHECK(r.out.find("no code block") == std::string::npos);  // a refused request is no completion without code
    CHECK(r.out.find(", 3 problems, 3 samples") != std::string::npos);
    CHECK(r.err.find("HTTP 400 from the server") != std::string::npos);
    // report and show count the request failure apart from completions without code.
    const auto report = run_cli({"report", "1", "--db", db});
    REQUIRE_MESSAGE(report.exit_code == 0, report.err);
    CHECK_MESSAGE(report.out.find("request failures: 1 of the 1 extraction_failed samples") != std::string::npos,
                  report.out);
    const auto json = run_cli({"report", "1", "--json", "--db", db});
    REQUIRE_MESSAGE(json.exit_code == 0, json.err);
    CHECK(nlohmann::json::parse(json.out)["total"]["request_failures"] == 1);
    const auto show = run_cli({"show", "1", "--db", db});
    REQUIRE_MESSAGE(show.exit_code == 0, show.err);
    CHECK_MESSAGE(show.out.find("request failures: 1 sample(s)") != std::string::npos, show.out);
    CHECK(show.out.find("extraction_failed 1 (1 request failed)") != std::string::npos);
    CHECK(show.out.find("extraction_failed (request failed)") != std::string::npos);
  }
}

TEST_CASE("openai: at most concurrency requests are in flight, and more than one at once") {
  TempDir tmp("openai-concurrency");
  TestServer server(tmp, {"--delay", "0.3"});
  const std::string db = tmp / "results.db";
  const auto r = run_cli(run_args(server, db, {"--samples", "4", "--set", "openai.concurrency=3"}), kEnv);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(server.chat_requests() == 12);
  CHECK(server.stats().at("max_in_flight") == 3);
  CHECK(scalar(db, "select count(*) from samples where candidate is not null") == "12");
}

TEST_CASE("openai: a missing or refused key or an unreachable server is one error line, before anything is stored") {
  TempDir tmp("openai-bad-input");
  TestServer server(tmp, {});
  const std::string db = tmp / "results.db";
  auto missing = run_cli(run_args(server, db, {"--set", "openai.api_key_env=DICEBENCH_TEST_OPENAI_KEY_UNSET"}), {});
  check_one_error_line(missing, "the API key variable $DICEBENCH_TEST_OPENAI_KEY_UNSET is not set");
  CHECK(server.chat_requests() == 0);

  auto args =
      run_args(server, db, {"--set", "openai.base_url=http://127.0.0.1:" + std::to_string(free_port()) + "/v1"});
  auto unreachable = run_cli(args, kEnv);
  check_one_error_line(unreachable, "cannot reach http://127.0.0.1:");
  CHECK(scalar(db, "select count(*) from runs") == "0");
  CHECK(scalar(db, "select count(*) from samples") == "0");

  {
    TestServer strict(tmp, {"--require-key"});
    const std::string wrong = "sk-wrong-key-also-never-printed";
    auto refused = run_cli(run_args(strict, db, {}), {kKeyVariable + "=" + wrong});
    check_one_error_line(refused, "refused the API key from $" + kKeyVariable + " (HTTP 401: 'Unauthorized')");
    CHECK((refused.out + refused.err).find(wrong) == std::string::npos);
    CHECK(strict.chat_requests() == 0);
  }
  CHECK(scalar(db, "select count(*) from runs") == "0");

  // A server without keys: an empty api_key_env sends none.
  auto keyless = run_cli(run_args(server, db, {"--set", "openai.api_key_env="}), {});
  REQUIRE_MESSAGE(keyless.exit_code == 0, keyless.err);
  CHECK(server.stats().at("authorized") == 0);
  CHECK(server.chat_requests() == 3);
  CHECK(keyless.err.find("does not list") == std::string::npos);
}

TEST_CASE("openai: a reply that is not JSON or not a chat completion fails that sample, quoting it - the run goes on") {
  TempDir tmp("openai-bad-reply");
  TestServer server(tmp, {"--script", "malformed,notchat"});
  const std::string db = tmp / "results.db";
  const auto r = run_cli(run_args(server, db, {"--set", "openai.concurrency=1"}), kEnv);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(scalar(db, "select json_extract(gen_stats, '$.error') from samples where problem_id = 1") ==
        "the server's reply is not JSON: '<html>not json at all</html>'");
  CHECK(scalar(db, "select json_extract(gen_stats, '$.error') from samples where problem_id = 2") ==
        "the server's reply is not a chat completion: '{\"object\": \"list\", \"data\": []}'");
  CHECK(scalar(db, "select count(*) from samples where problem_id = 10 and candidate is not null") == "1");
  CHECK(scalar(db, "select status from runs") == "finished");
  // Bad replies are not cached: a re-run asks again for those two only.
  const auto again = run_cli(run_args(server, db, {"--set", "openai.concurrency=1"}), kEnv);
  REQUIRE_MESSAGE(again.exit_code == 0, again.err);
  CHECK(server.chat_requests() == 5);
  CHECK(scalar(db, "select count(*) from samples where run = 2 and candidate is not null") == "3");
}

TEST_CASE("openai: a run killed with SIGKILL resumes, and no answered request is sent again") {
  TempDir tmp("openai-kill");
  TestServer server(tmp, {"--delay", "0.25"});
  const std::string db = tmp / "results.db";
  const pid_t pid = start_cli(run_args(server, db, {"--samples", "4", "--set", "openai.concurrency=2"}), kEnv);
  int stored = 0;
  for (int i = 0; i < 400 && stored < 4; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    auto q = results::run_query(db, "select count(*) from samples");
    if (q.ok() && !q->rows.empty()) stored = static_cast<int>(std::get<std::int64_t>(q->rows[0][0]));
  }
  kill(pid, SIGKILL);
  CHECK(wait_cli(pid) == 128 + SIGKILL);
  REQUIRE(stored >= 4);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // requests in transit reach the server
  const int sent_before = server.chat_requests();
  const int answered_before = cache_answers(db + ".openai-cache.sqlite");
  // As if the kill had come between an answer's arrival (cached at once) and its sample's
  // transaction: the last stored sample goes; its answer stays in the cache.
  const std::string dropped =
      scalar(db, "select problem_id || '/' || sample_index from samples order by id desc limit 1");
  execute(db, "delete from samples where id = (select max(id) from samples)");
  const std::string stored_before = scalar(db, "select count(*) from samples");
  CHECK(std::stoi(stored_before) < 12);
  CHECK(answered_before > std::stoi(stored_before));

  const auto resumed = run_cli({"run", "--resume", "1", "--generate-only", "--db", db}, kEnv);
  REQUIRE_MESSAGE(resumed.exit_code == 0, resumed.err);
  CHECK(resumed.out.find(stored_before + " stored before") != std::string::npos);
  CHECK(scalar(db, "select count(distinct problem_id || '/' || sample_index) from samples") == "12");
  CHECK(scalar(db, "select count(*) from samples where candidate is not null") == "12");
  CHECK(scalar(db, "select status from runs where id = 1") == "finished");
  // Only what no stored answer covered went out again; the dropped sample came from the cache.
  CHECK(server.chat_requests() == sent_before + (12 - answered_before));
  CHECK(
      scalar(db, "select json_extract(gen_stats, '$.cached') from samples where problem_id || '/' || sample_index = '" +
                     dropped + "'") == "1");
}

TEST_CASE("openai: Ctrl-C stops the run as interrupted, keeps every stored answer, and a resume finishes it") {
  TempDir tmp("openai-interrupt");
  TestServer server(tmp, {"--delay", "0.25"});
  const std::string db = tmp / "results.db";
  const pid_t pid = start_cli(run_args(server, db, {"--samples", "4", "--set", "openai.concurrency=2"}), kEnv);
  int stored = 0;
  for (int i = 0; i < 400 && stored < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    auto q = results::run_query(db, "select count(*) from samples");
    if (q.ok() && !q->rows.empty()) stored = static_cast<int>(std::get<std::int64_t>(q->rows[0][0]));
  }
  kill(pid, SIGINT);
  CHECK(wait_cli(pid) == 130);
  REQUIRE(stored >= 2);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  CHECK(scalar(db, "select status from runs where id = 1") == "interrupted");
  const int sent_before = server.chat_requests();
  const int answered_before = cache_answers(db + ".openai-cache.sqlite");
  const int stored_before = std::stoi(scalar(db, "select count(*) from samples"));
  CHECK(stored_before >= stored);
  CHECK(stored_before < 12);
  // Every answer that arrived before the interrupt was stored.
  CHECK(answered_before == stored_before);

  const auto resumed = run_cli({"run", "--resume", "1", "--generate-only", "--db", db}, kEnv);
  REQUIRE_MESSAGE(resumed.exit_code == 0, resumed.err);
  CHECK(scalar(db, "select count(*) from samples where candidate is not null") == "12");
  CHECK(server.chat_requests() == sent_before + (12 - answered_before));
}

TEST_CASE(
    "openai: with n = on, one request carries a problem's samples - a server ignoring n gets the rest one by one") {
  TempDir tmp("openai-n");
  {
    TestServer server(tmp, {});
    const std::string db = tmp / "n.db";
    const auto r = run_cli(run_args(server, db, {"--samples", "3", "--set", "openai.n=on"}), kEnv);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(server.chat_requests() == 3);
    CHECK(scalar(db, "select count(distinct completion) from samples where candidate is not null") == "9");
    const auto again = run_cli(run_args(server, db, {"--samples", "3", "--set", "openai.n=on"}), kEnv);
    REQUIRE_MESSAGE(again.exit_code == 0, again.err);
    CHECK(server.chat_requests() == 3);
    CHECK(scalar(db,
                 "select count(*) from samples as a join samples as b on a.problem_id = b.problem_id and "
                 "a.sample_index = b.sample_index and a.run = 1 and b.run = 2 and a.completion = b.completion") == "9");
    auto seeded = run_cli(run_args(server, db, {"--set", "openai.n=on", "--set", "openai.seed=sample"}), kEnv);
    check_one_error_line(seeded, "takes one seed");
  }
  {
    TestServer server(tmp, {"--ignore-n"});
    const std::string db = tmp / "ignored.db";
    const auto r = run_cli(run_args(server, db, {"--samples", "3", "--set", "openai.n=on"}), kEnv);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(server.chat_requests() == 9);  // 3 with n = 3, each answered once, then 6 alone
    CHECK(scalar(db, "select count(*) from samples where candidate is not null") == "9");
  }
  {
    // transformers serve ignores n and ends its streams without [DONE]: a stream whose one choice
    // finished is a whole reply of fewer choices, not a cut one, and the rest are asked one by one.
    TestServer server(tmp, {"--ignore-n", "--no-done"});
    const std::string db = tmp / "ignored-no-done.db";
    const auto r = run_cli(run_args(server, db, {"--samples", "3", "--set", "openai.n=on"}), kEnv);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(r.err.find("fewer choices than \"n\" asked for") != std::string::npos);
    CHECK(server.chat_requests() == 9);
    CHECK(scalar(db,
                 "select count(*) from samples where candidate is not null and "
                 "json_extract(gen_stats, '$.attempts') = 1") == "9");
  }
}

// ---- Against a server that behaves like vLLM (issue 28) ----

namespace {

// Stored samples of a database, polled while a run goes on.
int stored_samples(const std::string& db) {
  auto q = results::run_query(db, "select count(*) from samples");
  return q.ok() && !q->rows.empty() ? static_cast<int>(std::get<std::int64_t>(q->rows[0][0])) : 0;
}

// Waits until `db` holds at least `count` samples (or 10 s have passed).
void wait_for_samples(const std::string& db, int count) {
  for (int i = 0; i < 400 && stored_samples(db) < count; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
}

size_t occurrences(const std::string& text, const std::string& part) {
  size_t found = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++found;
  return found;
}

}  // namespace

TEST_CASE(
    "openai (vLLM): with n = on each sample records its own share of the one usage - totals are the replies' usage") {
  TempDir tmp("openai-n-usage");
  TestServer server(tmp, {});
  const std::string db = tmp / "results.db";
  const auto r = run_cli(run_args(server, db, {"--samples", "3", "--set", "openai.n=on"}), kEnv);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(server.chat_requests() == 3);
  const auto stats = server.stats();
  const std::string sent = std::to_string(stats.at("completion_tokens").get<int>());
  // The samples' completion tokens add up to what the replies' usage said, per request and in all.
  CHECK(scalar(db, "select sum(json_extract(gen_stats, '$.completion_tokens')) from samples") == sent);
  CHECK_MESSAGE(r.out.find(" " + sent + " completion; ") != std::string::npos, r.out);
  CHECK(scalar(db,
               "select count(*) from samples where json_extract(gen_stats, '$.usage_split') = 'even' "
               "and json_extract(gen_stats, '$.reply_choices') = 3") == "9");
  // Not each sample's whole reply: the choices differ in length and each got a third of it.
  CHECK(scalar(db,
               "select max(json_extract(gen_stats, '$.completion_tokens')) - min(json_extract(gen_stats, "
               "'$.completion_tokens')) "
               "from samples") != "0");
  // Re-read from the cache, the split is the same.
  const auto again = run_cli(run_args(server, db, {"--samples", "3", "--set", "openai.n=on"}), kEnv);
  REQUIRE_MESSAGE(again.exit_code == 0, again.err);
  CHECK(server.chat_requests() == 3);
  CHECK(scalar(db, "select sum(json_extract(gen_stats, '$.completion_tokens')) from samples where run = 2") == sent);

  // Where the reply counts each choice's tokens (logprobs: one entry a token), each sample has its own.
  const auto counted =
      run_cli(run_args(server, db,
                       {"--samples", "3", "--set", "openai.n=on", "--set", "openai.extra_body={\"logprobs\": true}"}),
              kEnv);
  REQUIRE_MESSAGE(counted.exit_code == 0, counted.err);
  auto rows = results::run_query(db,
                                 "select completion, json_extract(gen_stats, '$.completion_tokens'), "
                                 "json_extract(gen_stats, '$.usage_split') from samples where run = 3");
  REQUIRE(rows.ok());
  REQUIRE(rows->rows.size() == 9);
  for (const auto& row : rows->rows) {
    std::istringstream words(std::get<std::string>(row[0]));
    int64_t count = 0;
    for (std::string word; words >> word;) ++count;
    CHECK(std::get<std::int64_t>(row[1]) == count);
    CHECK(std::get<std::string>(row[2]) == "per_choice");
  }
}

TEST_CASE(
    "openai (vLLM): a server restart longer than the old retries' 30 s is waited for - nothing is stored as failed") {
  TempDir tmp("openai-restart");
  TestServer server(tmp, {"--delay", "0.3"});
  const std::string db = tmp / "results.db";
  auto run = std::async(std::launch::async, [&] {
    return run_cli(run_args(server, db, {"--samples", "2", "--set", "openai.concurrency=2"}), kEnv);
  });
  wait_for_samples(db, 2);
  server.stop();  // the model server goes down (as for a restart)...
  const auto down = Clock::now();
  std::this_thread::sleep_for(std::chrono::seconds(35));
  server.start(server.port());  // ...and comes back on its address, 35 s later
  const auto r = run.get();
  MESSAGE("the run went on " << std::chrono::duration<double>(Clock::now() - down).count()
                             << " s after the server went down");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(scalar(db, "select status from runs") == "finished");
  CHECK(scalar(db, "select count(*) from samples where candidate is not null") == "6");
  CHECK(scalar(db, "select count(*) from samples where json_extract(gen_stats, '$.error') is not null") == "0");
  CHECK(scalar(db, "select max(json_extract(gen_stats, '$.attempts')) from samples") != "1");
  // While the server was down, the retries were told as they went (without -v), and the progress
  // counted the samples stored before it went (a line every 10 s, not once per batch).
  CHECK_MESSAGE(r.err.find("openai: retrying ") != std::string::npos, r.err);
  CHECK(r.err.find("after: no reply: ") != std::string::npos);
  CHECK_MESSAGE(r.err.find("generating: 2/6 samples") != std::string::npos, r.err);
}

TEST_CASE(
    "openai (vLLM): a server gone past the retry window stops the run interrupted, nothing failed stored - "
    "a resume at its new address, with new concurrency and timeouts, finishes it and the run records the change") {
  TempDir tmp("openai-gone");
  auto server = std::make_unique<TestServer>(tmp, std::vector<std::string>{"--delay", "0.3"});
  const std::string old_url = server->base_url();
  const std::string db = tmp / "results.db";
  auto run = std::async(std::launch::async, [&] {
    return run_cli(
        run_args(*server, db, {"--samples", "2", "--set", "openai.concurrency=2", "--set", "openai.retry_window_s=2"}),
        kEnv);
  });
  wait_for_samples(db, 2);
  server.reset();  // gone for good
  const auto r = run.get();
  check_one_error_line(r, "run 1 interrupted: openai: the server stopped answering: no reply from " + old_url);
  // How long it was retried, as measured, within the window that ended it.
  const size_t retried_at = r.err.find("; retried for ");
  REQUIRE(retried_at != std::string::npos);
  const double retried_s = std::stod(r.err.substr(retried_at + 14));
  CHECK(retried_s > 0);
  CHECK(retried_s <= 2.0);
  CHECK(r.err.find(" s (openai.retry_window_s = 2 s, and no retry is sent that would fall past it)") !=
        std::string::npos);
  CHECK(r.err.find("openai: retrying ") != std::string::npos);
  CHECK(r.err.find("continue with dicebench run --resume 1 --generate-only --db " + db) != std::string::npos);
  CHECK(scalar(db, "select status from runs") == "interrupted");
  const std::string stored = scalar(db, "select count(*) from samples");
  CHECK(std::stoi(stored) >= 2);
  CHECK(std::stoi(stored) < 6);
  // What the server did not answer is not a sample result: nothing stored as failed.
  CHECK(scalar(db, "select count(*) from samples where candidate is null") == "0");
  const std::string config_before = scalar(db, "select config from runs");

  // The server is back at another address. The host's own settings cannot change on resume; the
  // model's settings that shape completions cannot either.
  TestServer moved(tmp, {});
  const std::vector<std::string> resume = {"run", "--resume", "1", "--generate-only", "--db", db};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = resume;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  check_one_error_line(run_cli(with({"--set", "openai.base_url=" + moved.base_url(), "--set", "eval.trials=3"}), kEnv),
                       "eval.trials cannot change");
  check_one_error_line(
      run_cli(with({"--set", "openai.base_url=" + moved.base_url(), "--set", "openai.temperature=0.5"}), kEnv),
      "the model's settings changed since run 1 started");
  CHECK(scalar(db, "select config from runs") == config_before);
  CHECK(scalar(db, "select count(*) from samples") == stored);
  CHECK(moved.chat_requests() == 0);

  const auto resumed = run_cli(with({"--set", "openai.base_url=" + moved.base_url(), "--set", "openai.concurrency=1",
                                     "--set", "openai.timeout_s=30", "--set", "openai.retry_window_s=60"}),
                               kEnv);
  REQUIRE_MESSAGE(resumed.exit_code == 0, resumed.err);
  CHECK(resumed.out.find(stored + " stored before") != std::string::npos);
  CHECK(scalar(db, "select status from runs") == "finished");
  CHECK(scalar(db, "select count(*) from samples where candidate is not null") == "6");
  CHECK(moved.chat_requests() == 6 - std::stoi(stored));
  CHECK(moved.stats().at("max_in_flight") == 1);
  // The run records the resume: old and new values, and its settings are the new ones.
  CHECK(scalar(db, "select json_extract(config, '$.resumes[0].changed.\"openai.base_url\".from') from runs") ==
        old_url);
  CHECK(scalar(db, "select json_extract(config, '$.resumes[0].changed.\"openai.base_url\".to') from runs") ==
        moved.base_url());
  CHECK(scalar(db, "select json_extract(config, '$.resumes[0].changed.\"openai.concurrency\".from') from runs") == "2");
  CHECK(scalar(db, "select json_extract(config, '$.resumes[0].changed.\"openai.timeout_s\".from') from runs") ==
        "NULL");
  CHECK(scalar(db, "select json_extract(config, '$.resumes[0].changed.\"openai.retry_window_s\".to') from runs") ==
        "60");
  CHECK(scalar(db, "select json_extract(config, '$.resumes[0].at') from runs") != "NULL");
  CHECK(scalar(db, "select json_extract(config, '$.settings.\"openai.base_url\"') from runs") == moved.base_url());
  CHECK(resumed.err.find("openai.base_url changes from '" + old_url + "' to '" + moved.base_url() + "'") !=
        std::string::npos);
  const auto show = run_cli({"show", "1", "--db", db});
  CHECK(show.out.find("\"resumes\"") != std::string::npos);
}

TEST_CASE(
    "openai (vLLM): a model the server does not serve is one error line listing what it serves, before the run is "
    "recorded") {
  TempDir tmp("openai-unlisted");
  TestServer server(tmp, {"--served-model-name", "test-model,other-model"});
  const std::string db = tmp / "results.db";
  auto args = run_args(server, db, {});
  args[2] = "openai:test-modle";
  const auto r = run_cli(args, kEnv);
  check_one_error_line(
      r, "openai: " + server.base_url() +
             " does not serve the model 'test-modle'; it serves test-model, other-model (--model openai:NAME)");
  CHECK(server.chat_requests() == 0);
  CHECK(scalar(db, "select count(*) from runs") == "0");
  // And one it serves under a second name runs.
  args[2] = "openai:other-model";
  const auto other = run_cli(args, kEnv);
  REQUIRE_MESSAGE(other.exit_code == 0, other.err);
  CHECK(server.chat_requests() == 3);
}

TEST_CASE(
    "openai (transformers serve): a server whose model list names none refuses another model at the first request: "
    "one error line, nothing stored; the model it serves runs") {
  TempDir tmp("openai-pinned");
  TestServer server(tmp, {"--unlisted"});
  const std::string db = tmp / "results.db";
  auto args = run_args(server, db, {"--samples", "2"});
  args[2] = "openai:no-such-model";
  const auto r = run_cli(args, kEnv);
  check_one_error_line(r,
                       "openai: the server refused the first request for the model 'no-such-model': HTTP 400 from "
                       "the server: 'Server is pinned to 'test-model'; requested 'no-such-model'.'");
  CHECK(server.chat_requests() == 1);  // the first request alone, not one refusal per sample
  CHECK(scalar(db, "select count(*) from samples") == "0");
  CHECK(scalar(db, "select status from runs") == "failed");
  const auto served = run_cli(run_args(server, db, {"--samples", "2"}), kEnv);
  REQUIRE_MESSAGE(served.exit_code == 0, served.err);
  CHECK(server.chat_requests() == 7);
  CHECK(scalar(db, "select count(*) from samples where candidate is not null") == "6");
}

TEST_CASE("openai (vLLM): a base URL without /v1 is one error line with the hint, nothing stored") {
  TempDir tmp("openai-no-v1");
  TestServer server(tmp, {});
  const std::string db = tmp / "results.db";
  const std::string root = "http://127.0.0.1:" + std::to_string(server.port());
  const auto r = run_cli(run_args(server, db, {"--set", "openai.base_url=" + root}), kEnv);
  check_one_error_line(r, "openai: " + root +
                              "/models is not found (HTTP 404: 'Not Found'); OpenAI-compatible servers "
                              "answer under /v1: --set openai.base_url=" +
                              root + "/v1");
  CHECK(server.chat_requests() == 0);
  CHECK(scalar(db, "select count(*) from runs") == "0");
  CHECK(scalar(db, "select count(*) from samples") == "0");
}

TEST_CASE(
    "openai (vLLM): a server that wants a key, and an empty api_key_env: the error says no key was sent and how to "
    "give one") {
  TempDir tmp("openai-no-key");
  TestServer server(tmp, {"--require-key"});
  const std::string db = tmp / "results.db";
  const auto r = run_cli(run_args(server, db, {"--set", "openai.api_key_env="}), kEnv);
  check_one_error_line(r, "openai: " + server.base_url() +
                              " wants an API key (HTTP 401: 'Unauthorized') and none was sent, "
                              "as openai.api_key_env is empty: export the key in a variable and pass --set "
                              "openai.api_key_env=VARIABLE");
  CHECK(r.err.find("refused the API key from $") == std::string::npos);
  CHECK(scalar(db, "select count(*) from runs") == "0");
  // Given as it says, the key goes out.
  const auto keyed = run_cli(run_args(server, db, {"--set", "openai.api_key_env=" + kKeyVariable}), kEnv);
  REQUIRE_MESSAGE(keyed.exit_code == 0, keyed.err);
  CHECK(server.stats().at("authorized") == 3);
}

TEST_CASE(
    "openai (vLLM): a reply that arrives during Ctrl-C is cached and stored - the resume does not ask for it again") {
  TempDir tmp("openai-ctrl-c-reply");
  TestServer server(tmp, {"--delay", "1.0"});
  const std::string db = tmp / "results.db";
  const pid_t pid =
      start_cli(run_args(server, db, {"--problems", "1", "--samples", "3", "--set", "openai.concurrency=1"}), kEnv);
  for (int i = 0; i < 400 && server.stats().at("in_flight") == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  REQUIRE(server.stats().at("in_flight") == 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  kill(pid, SIGINT);  // the server answers 0.7 s later
  CHECK(wait_cli(pid) == 130);
  CHECK(scalar(db, "select status from runs") == "interrupted");
  CHECK(server.chat_requests() == 1);  // nothing new went out after Ctrl-C
  CHECK(cache_answers(db + ".openai-cache.sqlite") == 1);
  CHECK(scalar(db, "select count(*) from samples where candidate is not null") == "1");
  const auto resumed = run_cli({"run", "--resume", "1", "--generate-only", "--db", db}, kEnv);
  REQUIRE_MESSAGE(resumed.exit_code == 0, resumed.err);
  CHECK(server.chat_requests() == 3);
  CHECK(scalar(db, "select count(*) from samples where candidate is not null") == "3");
}

TEST_CASE("openai (vLLM): top_p = 0 is refused by the settings check, one error line, before the server is asked") {
  TempDir tmp("openai-top-p");
  TestServer server(tmp, {});
  const std::string db = tmp / "results.db";
  const auto r = run_cli(run_args(server, db, {"--set", "openai.top_p=0"}), kEnv);
  check_one_error_line(r, "openai.top_p = '0': expected a number above 0 and at most 1");
  CHECK(server.stats().at("models_requests") == 0);
  CHECK(server.chat_requests() == 0);
  CHECK(scalar(db, "select count(*) from runs") == "0");
}

TEST_CASE("openai (vLLM): max_tokens not below the served model's max_model_len is warned about once") {
  TempDir tmp("openai-max-model-len");
  TestServer server(tmp, {"--max-model-len", "64"});
  const std::string db = tmp / "results.db";
  const auto r = run_cli(run_args(server, db, {"--set", "openai.max_tokens=100"}), kEnv);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK_MESSAGE(occurrences(r.err, "openai.max_tokens = 100 is not below the served model's max_model_len 64") == 1,
                r.err);
  const auto fits = run_cli(run_args(server, db, {"--set", "openai.max_tokens=32"}), kEnv);
  REQUIRE_MESSAGE(fits.exit_code == 0, fits.err);
  CHECK(fits.err.find("max_model_len") == std::string::npos);
}

TEST_CASE(
    "openai (vLLM): requests stream - an idle timeout, not a whole-reply one, ends a stalled reply, and a cut or "
    "aborted one is asked again") {
  TempDir tmp("openai-stream");
  {
    // Chunks 0.15 s apart: the reply takes about 2 s, twice the idle timeout, and is not cut short.
    TestServer server(tmp, {"--chunk-delay", "0.15"});
    const std::string db = tmp / "trickle.db";
    const auto r = run_cli(run_args(server, db, {"--problems", "1", "--set", "openai.idle_timeout_s=1"}), kEnv);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(server.stats().at("streamed") == 1);
    CHECK(server.chat_requests() == 1);
    CHECK(scalar(db, "select json_extract(gen_stats, '$.attempts') from samples") == "1");
    CHECK(std::stod(scalar(db, "select json_extract(gen_stats, '$.latency_s') from samples")) > 1.0);
    CHECK(scalar(db, "select json_extract(gen_stats, '$.streamed') from samples") == "1");
    CHECK(scalar(db, "select json_extract(gen_stats, '$.completion_tokens') from samples") == "10");
    CHECK(scalar(db, "select count(*) from samples where candidate like 'class ModelNew:%'") == "1");
  }
  {
    // The first chunk, then 10 s of silence: given up after the idle second, and asked again.
    TestServer server(tmp, {"--script", "stall,cut,abort"});
    const std::string db = tmp / "stall.db";
    const auto start = Clock::now();
    const auto r = run_cli(run_args(server, db, {"--problems", "1", "--set", "openai.idle_timeout_s=1"}), kEnv);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(server.chat_requests() == 4);  // stalled, cut before [DONE], aborted (as by vLLM stopping), then whole
    CHECK(seconds < 8.0);                // the idle second and three backoffs (at most 3.5 s), not the 10 s of silence
    CHECK(scalar(db, "select json_extract(gen_stats, '$.attempts') from samples") == "4");
    CHECK(scalar(db, "select json_extract(gen_stats, '$.finish_reason') from samples") == "stop");
    CHECK(scalar(db, "select count(*) from samples where candidate like 'class ModelNew:%'") == "1");
  }
  {
    // Streams that end without [DONE], as transformers serve ends them (the finish_reason and usage
    // chunks, then a clean close): whole replies, each stored at its first attempt.
    TestServer server(tmp, {"--no-done"});
    const std::string db = tmp / "no-done.db";
    const auto r = run_cli(run_args(server, db, {"--samples", "2"}), kEnv);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(server.chat_requests() == 6);
    CHECK(server.stats().at("streamed") == 6);
    CHECK(scalar(db,
                 "select count(*) from samples where candidate like 'class ModelNew:%' and "
                 "json_extract(gen_stats, '$.attempts') = 1 and json_extract(gen_stats, '$.finish_reason') = 'stop' "
                 "and json_extract(gen_stats, '$.completion_tokens') = 10") == "6");
  }
  {
    // stream = off: one JSON reply, as before.
    TestServer server(tmp, {});
    const std::string db = tmp / "unstreamed.db";
    const auto r = run_cli(run_args(server, db, {"--set", "openai.stream=off"}), kEnv);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(server.stats().at("streamed") == 0);
    CHECK(scalar(db, "select count(*) from samples where candidate like 'class ModelNew:%'") == "3");
    CHECK(scalar(db, "select count(*) from samples where json_extract(gen_stats, '$.streamed') = 0") == "3");
  }
}

TEST_CASE(
    "openai (vLLM): a reply left silent by a server going down is given up once the server refuses connections, "
    "not held for the idle timeout (which would hold vLLM's shutdown) - the run goes on once it is back") {
  TempDir tmp("openai-going-down");
  // The first reply: the server stops taking connections and leaves that reply open and silent, as
  // vLLM does while it shuts down (it waits for such connections to close before it exits).
  TestServer server(tmp, {"--script", "shutdown"});
  const std::string db = tmp / "results.db";
  auto run = std::async(std::launch::async, [&] {
    return run_cli(run_args(server, db, {"--set", "openai.concurrency=1"}), kEnv);
  });
  for (int i = 0; i < 400 && server.chat_requests() < 1; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  const auto down = Clock::now();
  // Nothing listens for 15 s (a supervisor restarts vLLM once the old process is gone), then a new
  // server takes the address while the old process still holds the silent reply.
  std::this_thread::sleep_for(std::chrono::seconds(15));
  server.start(server.port(), std::vector<std::string>{});
  const auto r = run.get();
  const double seconds = std::chrono::duration<double>(Clock::now() - down).count();
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(seconds < 30);  // given up 10 s into its silence, not after the 300 s idle timeout, nor the 60 s it stays open
  // Retried (and told so), not final.
  CHECK(r.err.find("openai: retrying 1 request(s) after: no reply: the reply went silent while the server refuses "
                   "new connections") != std::string::npos);
  CHECK(r.err.find("failed: no reply") == std::string::npos);
  CHECK(scalar(db, "select count(*) from samples where candidate like 'class ModelNew:%'") == "3");
  CHECK(scalar(db, "select max(json_extract(gen_stats, '$.attempts')) from samples") != "1");
}
