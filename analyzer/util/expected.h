// A value or a one-line error message. Readers and parsers return this instead of throwing,
// so an error in one input stays data and the scan goes on.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace depscan {

struct Error {
  std::string message;
};

template <class T>
class Expected {
 public:
  Expected(T value) : state_(std::move(value)) {}            // NOLINT: implicit by design
  Expected(Error error) : state_(std::move(error)) {}        // NOLINT
  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() { return std::get<0>(state_); }
  const T& value() const { return std::get<0>(state_); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const std::string& error() const { return std::get<1>(state_).message; }

 private:
  std::variant<T, Error> state_;
};

}  // namespace depscan
