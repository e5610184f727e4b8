#include "sluice/status.h"

namespace sluice {

std::string Status::ToString() const {
  switch (code_) {
    case Code::kOk:
      return "OK";
    case Code::kWrongType:
      return "wrong type";
    case Code::kNotInteger:
      return "not an integer";
    case Code::kNotFloat:
      return "not a float";
    case Code::kOverflow:
      return "overflow";
    case Code::kNoSuchKey:
      return "no such key";
    case Code::kInvalidArgument:
      return "invalid argument: " + message_;
    case Code::kIOError:
      return "IO error: " + message_;
    case Code::kCorruption:
      return "corruption: " + message_;
    case Code::kLockConflict:
      return "lock conflict: " + message_;
    case Code::kCannotPersist:
      return "cannot persist: " + message_;
  }
  return "unknown";
}

}  // namespace sluice
