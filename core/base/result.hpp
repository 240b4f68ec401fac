// Errors as values: Result<T> holds either a value or an Error: a kind (what the caller can do about
// it: branch on the kind, never on the text) and a one-line message. Modules return these from
// their public functions; exceptions never leave a module. [[nodiscard]] makes the compiler check
// that every Result is looked at.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace dicebench {

enum class ErrorKind {
  failed,           // an operation failed; the message says why, and no caller acts on it otherwise
  bad_input,        // the caller's own mistake: a setting, an option, a file or a source that is not what it must be
  io,               // reading or writing a file, the database or the network failed
  cancelled,        // stopped on request (Ctrl-C, a caller's stop): nothing is wrong
  model_stopped,    // the model cannot go on now (its server stopped answering); what it made is kept
  protocol_breach,  // a worker or plugin broke its protocol (a malformed or out-of-place message)
  problem_failed,  // a problem's own program failed (its reference could not be built or run): no candidate is to blame
  harness_failure,  // the evaluation harness itself failed: a worker of ours died or broke its protocol
};

struct Error {
  ErrorKind kind = ErrorKind::failed;
  std::string message;
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}
  Result(Error error) : state_(std::in_place_index<1>, std::move(error)) {}

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(state_); }
  const T& value() const& { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  // The value, or `fallback` when this holds an error (for callers to whom the why does not matter).
  T value_or(T fallback) && { return ok() ? std::get<0>(std::move(state_)) : std::move(fallback); }

  const Error& error() const { return std::get<1>(state_); }

 private:
  std::variant<T, Error> state_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), failed_(true) {}

  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const Error& error() const { return error_; }

 private:
  Error error_;
  bool failed_ = false;
};

inline Error make_error(std::string message) { return Error{ErrorKind::failed, std::move(message)}; }
inline Error make_error(ErrorKind kind, std::string message) { return Error{kind, std::move(message)}; }
// The same error, its message with `context` before it ("problem 3: ...").
inline Error with_context(const Error& error, const std::string& context) {
  return Error{error.kind, context + error.message};
}

}  // namespace dicebench

// Returns early with the error of a failed Result expression.
#define DICEBENCH_TRY(expr)                                                \
  do {                                                                     \
    auto&& dicebench_try_result_ = (expr);                                 \
    if (!dicebench_try_result_.ok()) return dicebench_try_result_.error(); \
  } while (0)
