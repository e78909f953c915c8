#pragma once
// Result<T>: a value or an Error. A small stand-in for std::expected (C++23).
// Reading the value of an error, or the error of a value, is a bug: it asserts in debug
// builds.
//
// Thread safety: plain values (as std::variant): concurrent const access is safe; a
// Result being changed has one owner.
#include <cassert>
#include <type_traits>
#include <utility>
#include <variant>

#include "a2ad/core/error.hpp"

namespace a2ad::core {

template <class T>
class [[nodiscard]] Result {
 public:
  /// An error "no result" (asio's co_spawn needs default-constructible results).
  Result() : v_(std::in_place_index<1>, Error(ErrorCode::kInternal, "no result")) {}
  // A value is taken by reference, not by value: a Result made from a value moves it once, not
  // twice (a task's record, moved through several layers per read, is not small).
  Result(const T& value) : v_(std::in_place_index<0>, value) {}          // NOLINT
  Result(T&& value) : v_(std::in_place_index<0>, std::move(value)) {}    // NOLINT
  Result(Error error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & {
    assert(ok());
    return std::get<0>(v_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<0>(v_);
  }
  // By value, so `for (auto& x : F().value())` does not dangle.
  T value() && {
    assert(ok());
    return std::get<0>(std::move(v_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const& {
    assert(!ok());
    return std::get<1>(v_);
  }
  Error error() && {
    assert(!ok());
    return std::get<1>(std::move(v_));
  }

 private:
  std::variant<T, Error> v_;
};

struct Ok {};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Ok) {}                                                  // NOLINT
  Result(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const& {
    assert(!ok_);
    return error_;
  }
  Error error() && {
    assert(!ok_);
    return std::move(error_);
  }

 private:
  Error error_;
  bool ok_ = true;
};

}  // namespace a2ad::core

#define A2AD_CONCAT_INNER(a, b) a##b
#define A2AD_CONCAT(a, b) A2AD_CONCAT_INNER(a, b)
/// A2AD_TRY_ASSIGN(lhs, expr): evaluates the Result `expr`; on error returns its Error from
/// the enclosing function, else assigns the value to `lhs` (which may be a declaration).
#define A2AD_TRY_ASSIGN(lhs, expr)                              \
  auto A2AD_CONCAT(a2ad_try_, __LINE__) = (expr);               \
  if (!A2AD_CONCAT(a2ad_try_, __LINE__))                        \
    return std::move(A2AD_CONCAT(a2ad_try_, __LINE__)).error(); \
  lhs = std::move(A2AD_CONCAT(a2ad_try_, __LINE__)).value()
