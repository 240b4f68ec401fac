// Integration tests of the openai: model plugin through the dicebench CLI, against a real HTTP
// server on 127.0.0.1 (openai_test_server.py, the project's Python, a free port): the happy path,
// retries and Retry-After, concurrency, the request cache on a re-run, a missing key, an unreachable
// server, bad replies, and a resume after kill -9. Nothing leaves the machine.
#include "tests/core/cli/cli_runner.hpp"
#include "tests/test_files.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <spawn.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
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

// The test server, started on a free port and stopped (by its pid) at the end.
class TestServer {
 public:
  TestServer(const TempDir& dir, const std::vector<std::string>& options) : stats_(dir / "server-stats.json") {
    const std::string port_file = dir / "server-port";
    fs::remove(port_file);
    std::vector<std::string> args = {DICEBENCH_PYTHON, kServerScript, "--port-file", port_file, "--stats", stats_,
                                     "--key", kKey};
    args.insert(args.end(), options.begin(), options.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    REQUIRE(posix_spawn(&pid_, argv[0], nullptr, nullptr, argv.data(), environ) == 0);
    for (int i = 0; i < 200 && !fs::exists(port_file); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    REQUIRE_MESSAGE(fs::exists(port_file), "the test server did not start");
    port_ = std::stoi(slurp(port_file));
  }
  ~TestServer() {
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  nlohmann::json stats() const { return nlohmann::json::parse(slurp(stats_)); }
  int chat_requests() const { return stats().at("chat_requests").get<int>(); }

 private:
  std::string stats_;
  pid_t pid_ = 0;
  int port_ = 0;
};

// A run of the openai model on the three level-1 test problems, generating only.
std::vector<std::string> run_args(const TestServer& server, const std::string& db, const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"run", "--model", "openai:test-model", "--suite", "kernelbench-l1",
                                   "--kernelbench-root", kKernelBench, "--generate-only", "--db", db, "--seed", "3",
                                   "--set", "openai.base_url=" + server.base_url(),
                                   "--set", "openai.api_key_env=" + kKeyVariable};
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

TEST_CASE("openai: a run stores completions with finish reason, tokens and latency - the key is never stored or printed") {
  TempDir tmp("openai-happy");
  TestServer server(tmp, {});
  const std::string db = tmp / "results.db";
  const auto r = run_cli(run_args(server, db, {"--samples", "2", "--set", "openai.seed=sample"}), kEnv);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(server.chat_requests() == 6);
  CHECK(server.stats().at("authorized") == 6);  // the key went out, as a bearer token
  CHECK(scalar(db, "select count(*) from samples where candidate like 'class ModelNew:%'") == "6");
  CHECK(scalar(db, "select count(*) from samples where json_extract(gen_stats, '$.finish_reason') = 'stop' "
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
  CHECK(server.chat_requests() == 6);  // nothing sent
  CHECK(server.stats().at("models_requests") == 1);  // nor was the server even asked for its models
  CHECK(again.out.find("request cache: 6 answer(s)") != std::string::npos);
  CHECK(scalar(db, "select count(*) from samples where run = 2 and json_extract(gen_stats, '$.cached') = 1") == "6");
  CHECK(scalar(db, "select count(*) from samples as a join samples as b on a.problem_id = b.problem_id and "
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

TEST_CASE("openai: 429 with Retry-After, 500, timeouts and dropped connections are retried - a 400 is not and fails its sample alone") {
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
    TestServer server(tmp, {"--script", "500,500"});
    const std::string db = tmp / "exhausted.db";
    const auto r = run_cli(run_args(server, db, {"--problems", "1", "--set", "openai.max_retries=1"}), kEnv);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(server.chat_requests() == 2);
    CHECK(scalar(db, "select json_extract(gen_stats, '$.error') from samples") ==
          "HTTP 500 from the server after 2 attempts: 'the server broke'");
    CHECK(scalar(db, "select status from runs") == "finished");
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
    CHECK(r.err.find("HTTP 400 from the server") != std::string::npos);
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

  auto args = run_args(server, db, {"--set", "openai.base_url=http://127.0.0.1:" + std::to_string(free_port()) + "/v1"});
  auto unreachable = run_cli(args, kEnv);
  check_one_error_line(unreachable, "cannot reach http://127.0.0.1:");
  CHECK(scalar(db, "select count(*) from runs") == "0");
  CHECK(scalar(db, "select count(*) from samples") == "0");

  {
    TestServer strict(tmp, {"--require-key"});
    const std::string wrong = "sk-wrong-key-also-never-printed";
    auto refused = run_cli(run_args(strict, db, {}), {kKeyVariable + "=" + wrong});
    check_one_error_line(refused, "refused the API key from $" + kKeyVariable + " (HTTP 401: 'Incorrect API key provided')");
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

  // A model the server does not list is warned about (some servers take unlisted aliases).
  auto args_unlisted = run_args(server, db, {"--problems", "1"});
  args_unlisted[2] = "openai:test-modle";
  auto unlisted = run_cli(args_unlisted, kEnv);
  REQUIRE_MESSAGE(unlisted.exit_code == 0, unlisted.err);
  CHECK_MESSAGE(unlisted.err.find("does not list the model 'test-modle' (it lists test-model)") != std::string::npos,
                unlisted.err);
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
  const std::string dropped = scalar(db, "select problem_id || '/' || sample_index from samples order by id desc limit 1");
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
  CHECK(scalar(db, "select json_extract(gen_stats, '$.cached') from samples where problem_id || '/' || sample_index = '" +
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

TEST_CASE("openai: with n = on, one request carries a problem's samples - a server ignoring n gets the rest one by one") {
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
    CHECK(scalar(db, "select count(*) from samples as a join samples as b on a.problem_id = b.problem_id and "
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
}
