// Store::Transaction::ReadWhole / WriteWhole: a key's whole value in and out as plain data, made
// of the types' own operations so the layouts stay theirs alone.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sluice/transaction.h"
#include "store_impl.h"
#include "stream.h"
#include "txn.h"

namespace sluice {

namespace {

template <typename T>
Status TakeInto(Result<T> r, T* out) {
  if (!r.ok()) return r.status();
  *out = std::move(r).value();
  return Status::Ok();
}

std::vector<std::string_view> Views(const std::vector<std::string>& strings) {
  return {strings.begin(), strings.end()};
}

}  // namespace

Result<std::optional<WholeValue>> Store::Transaction::ReadWhole(int db, std::string_view key) {
  Result<std::optional<ValueKind>> type = Type(db, key);
  if (!type.ok()) return type.status();
  if (!type->has_value()) return std::optional<WholeValue>();
  WholeValue v;
  v.kind = **type;
  Status s;
  switch (v.kind) {
    case ValueKind::kString: {
      std::optional<std::string> value;
      s = TakeInto(Get(db, key), &value);
      if (s.ok() && value) v.string = std::move(*value);
      break;
    }
    case ValueKind::kList:
      s = TakeInto(LRange(db, key, 0, -1), &v.elements);
      break;
    case ValueKind::kSet:
      s = TakeInto(SMembers(db, key), &v.elements);
      break;
    case ValueKind::kHash:
      s = TakeInto(HGetAll(db, key), &v.fields);
      break;
    case ValueKind::kZSet:
      s = TakeInto(ZRangeByRank(db, key, 0, -1, false), &v.scored);
      break;
    case ValueKind::kStream: {
      auto stream = internal::Stream::Open(*txn_, db, key, /*write=*/false);
      StreamWhole whole;
      s = stream.ok() ? internal::ReadStreamWhole(*stream, &whole) : stream.status();
      if (s.ok()) v.string = EncodeStreamWhole(whole);
      break;
    }
    default:
      return Status::InvalidArgument(std::string("cannot DUMP Sluice's native '") +
                                     TypeName(v.kind) + "' limiter state: it has no Redis form");
  }
  if (!s.ok()) return s;
  return std::optional<WholeValue>(std::move(v));
}

Status Store::Transaction::WriteWhole(int db, std::string_view key, const WholeValue& value,
                                      int64_t expire_at_ms) {
  const std::string_view keys[] = {key};
  if (Result<int64_t> d = Del(db, keys); !d.ok()) return d.status();
  Status s;
  switch (value.kind) {
    case ValueKind::kString: {
      SetOptions options;
      if (expire_at_ms != 0) options.expiry = {ExpiryChange::Kind::kSetAt, expire_at_ms};
      return Set(db, key, value.string, options).status();
    }
    case ValueKind::kList: {
      std::vector<std::string_view> elements = Views(value.elements);
      s = ListPush(db, key, ListEnd::kRight, elements, false).status();
      break;
    }
    case ValueKind::kSet: {
      std::vector<std::string_view> members = Views(value.elements);
      s = SAdd(db, key, members).status();
      break;
    }
    case ValueKind::kHash: {
      std::vector<std::pair<std::string_view, std::string_view>> pairs(value.fields.begin(),
                                                                       value.fields.end());
      s = HSet(db, key, pairs).status();
      break;
    }
    case ValueKind::kZSet: {
      std::vector<std::pair<double, std::string_view>> pairs;
      pairs.reserve(value.scored.size());
      for (const auto& [member, score] : value.scored) pairs.emplace_back(score, member);
      s = ZAdd(db, key, ZAddFlags{}, pairs).status();
      break;
    }
    case ValueKind::kStream: {
      StreamWhole whole;
      if (!DecodeStreamWhole(value.string, &whole)) {
        return Status::InvalidArgument("not a whole stream");
      }
      auto stream = internal::Stream::Open(*txn_, db, key, /*write=*/true);
      s = stream.ok() ? internal::WriteStreamWhole(*stream, whole) : stream.status();
      break;
    }
    default:
      return Status::InvalidArgument("a limiter state cannot be written whole");
  }
  if (!s.ok() || expire_at_ms == 0) return s;
  return ExpireAt(db, key, expire_at_ms, ExpireCondition::kAlways).status();
}

}  // namespace sluice
