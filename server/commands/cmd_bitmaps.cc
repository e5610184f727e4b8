// Bitmap commands on strings: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD, BITFIELD_RO.
// Arguments are checked in Redis 7.0's order, so the same bad input gets the same error; where
// Redis looks at the key before an argument (BITCOUNT's and BITPOS's ranges), a bad argument is
// reported only after the key's type says so.
#include <optional>
#include <string>
#include <vector>

#include "server/commands/commands.h"
#include "server/commands/notify_events.h"
#include "server/commands/replies.h"
#include "server/core/args.h"
#include "server/core/client_state.h"
#include "server/core/errors.h"
#include "server/core/server_state.h"
#include "sluice/transaction.h"

namespace sluice::server {

namespace {

using Txn = Store::Transaction;
using BitRange = Txn::BitRange;
using BitFieldOp = Txn::BitFieldOp;

// Redis's bit offset: a non-negative integer whose byte fits proto-max-bulk-len; with `bits`
// (BITFIELD) "#n" means n * bits.
std::optional<uint64_t> ParseBitOffset(CommandContext& ctx, std::string_view arg, int bits = 0) {
  const bool scaled = bits > 0 && !arg.empty() && arg[0] == '#';
  std::optional<int64_t> v = ParseInt64(scaled ? arg.substr(1) : arg);
  if (!v) return std::nullopt;
  // Redis multiplies as a long long; a product that wraps is then refused as negative or big.
  int64_t offset = scaled ? static_cast<int64_t>(static_cast<uint64_t>(*v) * bits) : *v;
  if (offset < 0 || (offset >> 3) >= ctx.server.proto_max_bulk_len()) return std::nullopt;
  return static_cast<uint64_t>(offset);
}

// Replies for a command whose argument was bad but whose key Redis looks at first: the reply a
// missing key gets, WRONGTYPE, or the argument's error.
void ReplyAfterKeyCheck(CommandContext& ctx, std::string_view key, int64_t missing_reply,
                        const Status& bad_argument) {
  Result<std::optional<ValueKind>> type = ctx.txn().Type(ctx.client.db, key);
  if (!type.ok()) return ReplyError(ctx.out, type.status());
  if (!type->has_value()) return ctx.out.Integer(missing_reply);
  if (**type != ValueKind::kString) return ReplyError(ctx.out, Status::WrongType());
  if (bad_argument.ok()) return ctx.out.Integer(0);
  ReplyError(ctx.out, bad_argument);
}

std::optional<bool> ParseBitUnit(std::string_view arg) {
  if (EqualsIgnoreCase(arg, "bit")) return true;
  if (EqualsIgnoreCase(arg, "byte")) return false;
  return std::nullopt;
}

// SETBIT key offset value
void SetBitCommand(CommandContext& ctx, Args args) {
  std::optional<uint64_t> offset = ParseBitOffset(ctx, args[2]);
  if (!offset) return ReplyError(ctx.out, BitOffsetInvalid());
  std::optional<int64_t> value = ParseInt64(args[3]);
  if (!value || (*value & ~int64_t{1}) != 0) return ReplyError(ctx.out, BitValueInvalid());
  const bool on = NotifyEnabled(kNotifyString | kNotifyNew);
  const bool was_missing = on && !KeyLive(ctx, args[1]);
  auto str_len = [&] {
    Result<int64_t> n = ctx.txn().StrLen(ctx.client.db, args[1]);
    return n.ok() ? *n : int64_t{-1};  // WRONGTYPE: SetBit reports it
  };
  const int64_t len_before = on && !was_missing ? str_len() : 0;
  Result<int64_t> r = ctx.txn().SetBit(ctx.client.db, args[1], *offset, *value == 1);
  if (r.ok()) {
    // As Redis: "new" when created; "setbit" when the key was created, grew, or the bit changed.
    if (was_missing) NotifyKeyspaceEvent(kNotifyNew, "new", ctx.client.db, args[1]);
    const bool grew = on && !was_missing && str_len() != len_before;
    if (was_missing || grew || *r != (*value == 1 ? 1 : 0)) {
      NotifyKeyspaceEvent(kNotifyString, "setbit", ctx.client.db, args[1]);
    }
  }
  ReplyInteger(ctx, r);
}

// GETBIT key offset
void GetBitCommand(CommandContext& ctx, Args args) {
  std::optional<uint64_t> offset = ParseBitOffset(ctx, args[2]);
  if (!offset) return ReplyError(ctx.out, BitOffsetInvalid());
  ReplyInteger(ctx, ctx.txn().GetBit(ctx.client.db, args[1], *offset));
}

// BITCOUNT key [start end [BYTE|BIT]]. Redis answers 0 for a missing key, and for two negative
// indices in the wrong order, before it reads the unit.
void BitCountCommand(CommandContext& ctx, Args args) {
  std::optional<BitRange> range;
  Status bad;
  bool zero = false;
  if (args.size() == 4 || args.size() == 5) {
    std::optional<int64_t> start = ParseInt64(args[2]);
    std::optional<int64_t> end = ParseInt64(args[3]);
    if (!start || !end) {
      bad = NotAnInteger();
    } else if (*start < 0 && *end < 0 && *start > *end) {
      zero = true;
    } else {
      range = BitRange{.start = *start, .end = *end, .end_given = true};
      if (args.size() == 5) {
        std::optional<bool> in_bits = ParseBitUnit(args[4]);
        if (!in_bits) bad = SyntaxError();
        range->in_bits = in_bits.value_or(false);
      }
    }
  } else if (args.size() != 2) {
    bad = SyntaxError();
  }
  if (!bad.ok() || zero) return ReplyAfterKeyCheck(ctx, args[1], 0, bad);
  ReplyInteger(ctx, ctx.txn().BitCount(ctx.client.db, args[1], range));
}

// BITPOS key bit [start [end [BYTE|BIT]]]
void BitPosCommand(CommandContext& ctx, Args args) {
  std::optional<int64_t> bit = ParseInt64(args[2]);
  if (!bit) return ReplyError(ctx.out, NotAnInteger());
  if (*bit != 0 && *bit != 1) return ReplyError(ctx.out, BitArgumentInvalid());
  std::optional<BitRange> range;
  Status bad;
  if (args.size() >= 4 && args.size() <= 6) {
    range.emplace();
    std::optional<int64_t> start = ParseInt64(args[3]);
    std::optional<bool> in_bits = args.size() == 6 ? ParseBitUnit(args[5]) : false;
    std::optional<int64_t> end = args.size() >= 5 ? ParseInt64(args[4]) : -1;
    if (!start) {
      bad = NotAnInteger();
    } else if (!in_bits) {
      bad = SyntaxError();
    } else if (!end) {
      bad = NotAnInteger();
    } else {
      *range = BitRange{
          .start = *start, .end = *end, .in_bits = *in_bits, .end_given = args.size() >= 5};
    }
  } else if (args.size() > 6) {
    bad = SyntaxError();
  }
  if (!bad.ok()) return ReplyAfterKeyCheck(ctx, args[1], *bit == 1 ? -1 : 0, bad);
  ReplyInteger(ctx, ctx.txn().BitPos(ctx.client.db, args[1], *bit == 1, range));
}

// BITOP AND|OR|XOR|NOT destkey key [key ...]
void BitOpCommand(CommandContext& ctx, Args args) {
  std::optional<Txn::BitOpKind> op;
  if (EqualsIgnoreCase(args[1], "and")) op = Txn::BitOpKind::kAnd;
  if (EqualsIgnoreCase(args[1], "or")) op = Txn::BitOpKind::kOr;
  if (EqualsIgnoreCase(args[1], "xor")) op = Txn::BitOpKind::kXor;
  if (EqualsIgnoreCase(args[1], "not")) op = Txn::BitOpKind::kNot;
  if (!op) return ReplyError(ctx.out, SyntaxError());
  if (*op == Txn::BitOpKind::kNot && args.size() != 4) {
    return ReplyError(ctx.out, BitOpNotOneKey());
  }
  const bool existed = StoreDestinationExisted(ctx, args[2]);
  Result<int64_t> r = ctx.txn().BitOp(ctx.client.db, *op, args[2], args.subspan(3));
  NotifyStore(ctx, r, kNotifyString, "set", args[2], existed);  // "del" when emptied
  ReplyInteger(ctx, r);
}

// A BITFIELD type: i1..i64 or u1..u63 (the digits end at a NUL byte, as Redis reads them).
bool ParseBitFieldType(std::string_view arg, BitFieldOp* op) {
  if (arg.empty() || (arg[0] != 'i' && arg[0] != 'u')) return false;
  op->is_signed = arg[0] == 'i';
  std::string_view digits = arg.substr(1);
  digits = digits.substr(0, digits.find('\0'));
  std::optional<int64_t> bits = ParseInt64(digits);
  if (!bits || *bits < 1 || *bits > (op->is_signed ? 64 : 63)) return false;
  op->bits = static_cast<int>(*bits);
  return true;
}

// Parses BITFIELD's subcommands in order (the first bad one is the error).
Status ParseBitFieldOps(CommandContext& ctx, Args args, std::vector<BitFieldOp>* ops) {
  auto overflow = BitFieldOp::Overflow::kWrap;
  for (size_t j = 2; j < args.size(); ++j) {
    const size_t more = args.size() - j - 1;
    BitFieldOp op;
    if (EqualsIgnoreCase(args[j], "get") && more >= 2) {
      op.kind = BitFieldOp::Kind::kGet;
    } else if (EqualsIgnoreCase(args[j], "set") && more >= 3) {
      op.kind = BitFieldOp::Kind::kSet;
    } else if (EqualsIgnoreCase(args[j], "incrby") && more >= 3) {
      op.kind = BitFieldOp::Kind::kIncrBy;
    } else if (EqualsIgnoreCase(args[j], "overflow") && more >= 1) {
      const std::string_view mode = args[++j];
      if (EqualsIgnoreCase(mode, "wrap")) {
        overflow = BitFieldOp::Overflow::kWrap;
      } else if (EqualsIgnoreCase(mode, "sat")) {
        overflow = BitFieldOp::Overflow::kSat;
      } else if (EqualsIgnoreCase(mode, "fail")) {
        overflow = BitFieldOp::Overflow::kFail;
      } else {
        return BitfieldOverflowType();
      }
      continue;
    } else {
      return SyntaxError();
    }
    if (!ParseBitFieldType(args[j + 1], &op)) return BitfieldTypeInvalid();
    std::optional<uint64_t> offset = ParseBitOffset(ctx, args[j + 2], op.bits);
    if (!offset) return BitOffsetInvalid();
    op.offset = *offset;
    if (op.kind != BitFieldOp::Kind::kGet) {
      std::optional<int64_t> value = ParseInt64(args[j + 3]);
      if (!value) return NotAnInteger();
      op.value = *value;
    }
    op.overflow = overflow;
    ops->push_back(op);
    j += op.kind == BitFieldOp::Kind::kGet ? 2 : 3;
  }
  return Status::Ok();
}

void BitFieldGeneric(CommandContext& ctx, Args args, bool read_only) {
  std::vector<BitFieldOp> ops;
  if (Status s = ParseBitFieldOps(ctx, args, &ops); !s.ok()) return ReplyError(ctx.out, s);
  if (read_only) {
    for (const BitFieldOp& op : ops) {
      if (op.kind != BitFieldOp::Kind::kGet) return ReplyError(ctx.out, BitfieldRoOnlyGet());
    }
  }
  const bool was_missing = !read_only && MissingForNew(ctx, args[1]);
  auto r = ctx.txn().BitField(ctx.client.db, args[1], ops);
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  if (!read_only) {
    // "new" when a write op created the key; "setbit" when any SET/INCRBY took effect.
    if (was_missing && KeyLive(ctx, args[1])) {
      NotifyKeyspaceEvent(kNotifyNew, "new", ctx.client.db, args[1]);
    }
    size_t changes = 0;
    for (size_t i = 0; i < ops.size() && i < r->size(); ++i) {
      if (ops[i].kind != BitFieldOp::Kind::kGet && (*r)[i].has_value()) ++changes;
    }
    if (changes > 0) NotifyKeyspaceEvent(kNotifyString, "setbit", ctx.client.db, args[1]);
  }
  ctx.out.Array(r->size());
  for (const std::optional<int64_t>& v : *r) {
    if (v) {
      ctx.out.Integer(*v);
    } else {
      ctx.out.NullBulk();
    }
  }
}

void BitFieldCommand(CommandContext& ctx, Args args) { BitFieldGeneric(ctx, args, false); }
void BitFieldRoCommand(CommandContext& ctx, Args args) { BitFieldGeneric(ctx, args, true); }

void Add(CommandTable& table, std::string name, int arity, uint32_t flags, KeyRange keys,
         Handler handler, std::string summary, std::string since, std::string hint) {
  table.Add(MakeSpec("bitmap", std::move(name), arity, flags, keys, handler, std::move(summary),
                     std::move(since), std::move(hint)));
}

}  // namespace

void RegisterBitmapCommands(CommandTable& table) {
  constexpr uint32_t kWriteOom = kWrite | kDenyOom;
  Add(table, "setbit", 4, kWriteOom, {1, 1, 1}, SetBitCommand,
      "Sets or clears the bit at offset in the string value stored at key", "2.2.0",
      "key offset value");
  Add(table, "getbit", 3, kReadOnly | kFast, {1, 1, 1}, GetBitCommand,
      "Returns the bit value at offset in the string value stored at key", "2.2.0", "key offset");
  Add(table, "bitcount", -2, kReadOnly, {1, 1, 1}, BitCountCommand, "Count set bits in a string",
      "2.6.0", "key [start end [BYTE|BIT]]");
  Add(table, "bitpos", -3, kReadOnly, {1, 1, 1}, BitPosCommand,
      "Find first bit set or clear in a string", "2.8.7", "key bit [start [end [BYTE|BIT]]]");
  Add(table, "bitop", -4, kWriteOom, {2, -1, 1}, BitOpCommand,
      "Perform bitwise operations between strings", "2.6.0", "operation destkey key [key ...]");
  Add(table, "bitfield", -2, kWriteOom, {1, 1, 1}, BitFieldCommand,
      "Perform arbitrary bitfield integer operations on strings", "3.2.0",
      "key [GET encoding offset|[OVERFLOW WRAP|SAT|FAIL] SET encoding offset value|"
      "[OVERFLOW WRAP|SAT|FAIL] INCRBY encoding offset increment ...]");
  Add(table, "bitfield_ro", -2, kReadOnly | kFast, {1, 1, 1}, BitFieldRoCommand,
      "Perform arbitrary bitfield integer operations on strings. Read-only variant of BITFIELD",
      "6.0.0", "key [GET encoding offset ...]");
}

}  // namespace sluice::server
