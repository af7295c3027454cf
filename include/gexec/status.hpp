// Errors as values: an exit status and a message that gathers context on the way up.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace gexec {

// Process exit statuses; every failure carries one of these to main.
// interrupted: stopped cleanly at the user's Ctrl-C (128 + SIGINT, as a shell reports a process it killed).
enum class Exit : int { ok = 0, check_failed = 1, bad_input = 2, runtime = 3, interrupted = 130 };

struct Error {
  Exit code = Exit::runtime;
  std::string message;

  // Prefixes context, e.g. Error{...}.with("loading weights") -> "loading weights: ...".
  Error with(const std::string& context) const { return {code, context + ": " + message}; }
};

inline Error bad_input(std::string message) { return {Exit::bad_input, std::move(message)}; }
inline Error runtime_error(std::string message) { return {Exit::runtime, std::move(message)}; }

// Either a value or an Error.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}
  Result(Error error) : v_(std::move(error)) {}
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { assert(ok()); return std::get<0>(v_); }
  const T& value() const& { assert(ok()); return std::get<0>(v_); }
  T&& value() && { assert(ok()); return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() { return value(); }
  const Error& error() const { assert(!ok()); return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// A Result without a value.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)), failed_(true) {}
  static Status success() { return {}; }
  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const Error& error() const { assert(failed_); return error_; }

 private:
  Error error_;
  bool failed_ = false;
};

}  // namespace gexec

// Returns early from the enclosing function with the error of a failed Status or Result.
#define GEXEC_TRY(expr)                              \
  do {                                               \
    auto&& gexec_try_r_ = (expr);                    \
    if (!gexec_try_r_.ok()) return gexec_try_r_.error(); \
  } while (0)
