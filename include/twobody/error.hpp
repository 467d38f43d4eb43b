#pragma once
// Errors are values with a kind, so the command line can map each kind to its own exit code and a
// library user can tell bad data from a bad request from an exhausted machine.
#include <stdexcept>
#include <string>

namespace twobody {

enum class ErrorKind {
  Input = 3,        // the data: unreadable file, NaN, wrong columns, points outside the box
  Config = 4,       // the request: bins not increasing, rmax > L/2, unsupported dimension
  Resource = 5,     // memory or output capacity exhausted
  Backend = 6,      // a backend that is not built or has no device, or a device call that failed
  Output = 7,       // an output that could not be written whole (no space, no permission, closed stdout)
  Internal = 1,
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const noexcept { return kind_; }
  int exit_code() const noexcept { return static_cast<int>(kind_); }

 private:
  ErrorKind kind_;
};

[[noreturn]] inline void throw_input(const std::string& m) { throw Error(ErrorKind::Input, m); }
[[noreturn]] inline void throw_config(const std::string& m) { throw Error(ErrorKind::Config, m); }
[[noreturn]] inline void throw_output(const std::string& m) { throw Error(ErrorKind::Output, m); }

}  // namespace twobody
