// Errors carry a kind that callers branch on, never their text: a plugin's cancellation and a model
// that stopped, settings that are the user's mistake, and the message kept with its context.
#include "core/host/config.hpp"
#include "core/host/evaluation_settings.hpp"
#include "core/host/plugin_call.hpp"
#include "core/host/problem_selection.hpp"

#include <doctest/doctest.h>

#include <cstring>

using namespace dicebench;

TEST_CASE("a plugin's cancellation is ErrorKind::cancelled, and with a reason the model stopped") {
  dicebench_error error{};
  const Error asked = host::plugin_error("libdicebench-model-x.so", "generate", DICEBENCH_CANCELLED, error);
  CHECK(asked.kind == ErrorKind::cancelled);
  std::strcpy(error.message, "openai: the server stopped answering: no reply");
  const Error stopped = host::plugin_error("libdicebench-model-x.so", "generate", DICEBENCH_CANCELLED, error);
  CHECK(stopped.kind == ErrorKind::model_stopped);
  CHECK(stopped.message == "openai: the server stopped answering: no reply");  // the reason alone, no prefix
  const Error failed = host::plugin_error("libdicebench-model-x.so", "generate", DICEBENCH_FAILED, error);
  CHECK(failed.kind == ErrorKind::failed);
  std::memset(error.message, 0, sizeof(error.message));
  CHECK(host::plugin_error("libdicebench-model-x.so", "generate", DICEBENCH_FAILED, error).message ==
        "libdicebench-model-x.so: generate failed without saying why");
}

TEST_CASE("bad settings and selections are the caller's own mistakes: ErrorKind::bad_input") {
  host::Config config;
  config.set("eval.trials", "zero");
  auto settings = host::evaluation_settings(config);
  REQUIRE_FALSE(settings.ok());
  CHECK(settings.error().kind == ErrorKind::bad_input);
  auto selection = host::parse_problem_selection("1-");
  REQUIRE_FALSE(selection.ok());
  CHECK(selection.error().kind == ErrorKind::bad_input);
  CHECK(config.assign("no equals sign").error().kind == ErrorKind::bad_input);
}

TEST_CASE("an error keeps its kind when context is put before its message") {
  const Error error = with_context(make_error(ErrorKind::io, "disk full"), "cannot store sample 3: ");
  CHECK(error.kind == ErrorKind::io);
  CHECK(error.message == "cannot store sample 3: disk full");
}
