// The one error type of the Sluice engine: Status, and Result<T> (a value or a non-OK Status).
// The server maps each Code to Redis's exact error text in one place (server/core/errors.cc);
// nothing in storage/ knows Redis's wording beyond the messages of kInvalidArgument.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace sluice {

enum class Code : unsigned char {
  kOk = 0,
  kWrongType,        // the key holds a value of another type
  kNotInteger,       // the value (stored or given) is not an integer or out of range
  kNotFloat,         // the value (stored or given) is not a valid float
  kOverflow,         // an increment or decrement would overflow
  kNoSuchKey,        // the operation needs an existing key (RENAME, ...)
  kInvalidArgument,  // message() says what was wrong, e.g. "invalid expire time in 'set' command"
  kIOError,          // RocksDB or the filesystem failed; message() has the detail
  kCorruption,       // stored bytes could not be decoded
  kLockConflict,     // a Store::Transaction touched an undeclared key another unit holds
  kCannotPersist,    // writes are refused: the store cannot write to disk; message() says why
};

// Value type. Cheap to copy when OK (no allocation). Thread-compatible.
class Status {
 public:
  Status() = default;  // OK

  static Status Ok() { return Status(); }
  static Status WrongType() { return Status(Code::kWrongType, {}); }
  static Status NotInteger() { return Status(Code::kNotInteger, {}); }
  static Status NotFloat() { return Status(Code::kNotFloat, {}); }
  static Status Overflow() { return Status(Code::kOverflow, {}); }
  static Status NoSuchKey() { return Status(Code::kNoSuchKey, {}); }
  static Status InvalidArgument(std::string msg) {
    return Status(Code::kInvalidArgument, std::move(msg));
  }
  static Status IOError(std::string msg) { return Status(Code::kIOError, std::move(msg)); }
  static Status Corruption(std::string msg) { return Status(Code::kCorruption, std::move(msg)); }
  static Status CannotPersist(std::string msg) {
    return Status(Code::kCannotPersist, std::move(msg));
  }
  static Status LockConflict() {
    return Status(Code::kLockConflict, "key not declared by the transaction is locked by another");
  }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // Human-readable, for logs: "IO error: disk full".
  std::string ToString() const;

 private:
  Status(Code code, std::string msg) : code_(code), message_(std::move(msg)) {}
  Code code_ = Code::kOk;
  std::string message_;
};

// Either a T or a non-OK Status. Accessing value() of an error is a programming error.
template <typename T>
class Result {
 public:
  // Implicit by design. By reference: a T taken by value was moved twice (a collection's
  // handle is six strings, opened for every collection command).
  Result(T&& value) : value_(std::move(value)) {}                                // NOLINT
  Result(const T& value) : value_(value) {}                                      // NOLINT
  Result(Status status) : status_(std::move(status)) { assert(!status_.ok()); }  // NOLINT

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() & {
    assert(ok());
    return *value_;
  }
  const T& value() const& {
    assert(ok());
    return *value_;
  }
  T&& value() && {
    assert(ok());
    return std::move(*value_);
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace sluice
