// Limiter takes and refunds: each one atomic read -> pure limiter math -> write under the key's
// lock; LIMITS.TAKE reads every group's key, decides once (limiter::TakeAll) and writes all or
// nothing.
#include <cstdio>
#include <optional>
#include <variant>
#include <vector>

#include "scratch.h"
#include "store_impl.h"
#include "txn.h"

namespace sluice {

using internal::Entry;
using internal::RawKey;
using internal::Txn;

namespace {

// GCRA and WINDOW keep their state as decimal text in a string (compatible with redis-cell and
// INCR + EXPIRE); the other limiters keep binary state under their own kind.
struct StateKind {
  ValueKind kind;
  bool text;  // undecodable state is "not an integer" (like INCR) rather than corruption
};
constexpr StateKind kTextState{ValueKind::kString, true};

// How a LIMITS.TAKE group's algorithm keeps its state.
StateKind KindOf(const limiter::LimitParams& p) {
  switch (p.index()) {
    case 2:
      return {ValueKind::kSliding, false};
    case 3:
      return {ValueKind::kLeaky, false};
    default:  // GCRA, WINDOW
      return kTextState;
  }
}

Status CorruptStatus(StateKind sk) {
  return sk.text ? Status::NotInteger() : Status::Corruption("invalid limiter state");
}

void ApplyWrite(Txn& txn, const std::string& raw, StateKind sk, const limiter::Outcome& out) {
  if (out.write == limiter::Outcome::Write::kPut) {
    txn.Put(raw, sk.kind, out.expire_at_ms, out.value);
  } else if (out.write == limiter::Outcome::Write::kDelete) {
    txn.Delete(raw);
  }
}

// Runs one take in the unit: claim the key, read its state, call `take(state, now_ns, &outcome)`,
// write what the outcome says. The outcome lives per thread and is reused, so takes that fill it in
// place (GcraTakeInto, WindowTakeInto) allocate nothing once warm.
template <typename Fn>
Result<limiter::Decision> RunTake(Txn& txn, int db, std::string_view key, StateKind sk, Fn&& take) {
  thread_local limiter::Outcome out;
  const RawKey raw(db, key);
  if (Status c = txn.ClaimWrite(raw); !c.ok()) return c;
  const int64_t now_ns = txn.now_ns();
  auto cur = txn.ReadView(raw);  // viewed by `state` until the take has run
  if (!cur.ok()) return cur.status();
  limiter::StoredState state;
  const limiter::StoredState* state_ptr = nullptr;
  if (cur->has_value()) {
    if ((*cur)->kind != sk.kind) return Status::WrongType();
    state.value = (*cur)->payload;
    state.expire_at_ms = (*cur)->expire_at_ms;
    state_ptr = &state;
  }
  take(state_ptr, now_ns, &out);
  if (out.corrupt) return CorruptStatus(sk);
  ApplyWrite(txn, raw, sk, out);
  return out.decision;
}

Status CheckGroups(std::span<const LimitGroup> groups) {
  if (groups.empty() || groups.size() > limiter::kMaxLimitGroups) {
    return Status::InvalidArgument("invalid number of limits: 1 to 16 groups");
  }
  for (size_t i = 0; i < groups.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (groups[i].key == groups[j].key) return Status::InvalidArgument("duplicate key");
    }
  }
  return Status::Ok();
}

// Every group's key and stored state, read under the unit's claims.
struct GroupStates {
  std::vector<std::string> raws;
  std::vector<std::optional<Entry>> entries;  // own the payloads `states` view
  std::vector<limiter::StoredState> states;
  std::vector<const limiter::StoredState*> ptrs;  // nullptr: missing
  std::vector<limiter::LimitParams> params;
};

// Claims every key first (so a conflict touches nothing), then reads each state, checking its
// kind against the group's algorithm.
Status ReadGroups(Txn& txn, int db, std::span<const LimitGroup> groups, GroupStates* g) {
  const size_t count = groups.size();
  g->raws.resize(count);
  g->entries.resize(count);
  g->states.resize(count);
  g->ptrs.assign(count, nullptr);
  for (size_t i = 0; i < count; ++i) {
    internal::EncodeKeyTo(db, groups[i].key, &g->raws[i]);
    if (Status c = txn.ClaimWrite(g->raws[i]); !c.ok()) return c;
  }
  for (size_t i = 0; i < count; ++i) {
    g->params.push_back(groups[i].params);
    auto cur = txn.Read(g->raws[i]);
    if (!cur.ok()) return cur.status();
    g->entries[i] = std::move(*cur);
    if (!g->entries[i]) continue;
    if (g->entries[i]->kind != KindOf(groups[i].params).kind) return Status::WrongType();
    g->states[i].value = g->entries[i]->payload;
    g->states[i].expire_at_ms = g->entries[i]->expire_at_ms;
    g->ptrs[i] = &g->states[i];
  }
  return Status::Ok();
}

// LIMITS.TAKE (refund = false) or its REFUND form: reads every group under the unit's one
// `now`, decides with the pure math, then writes every group's outcome or, when denied, nothing.
Result<LimitsReply> RunAll(Txn& txn, int db, std::span<const LimitGroup> groups, int64_t n,
                           bool refund) {
  if (Status c = CheckGroups(groups); !c.ok()) return c;
  GroupStates g;
  if (Status r = ReadGroups(txn, db, groups, &g); !r.ok()) return r;
  limiter::MultiOutcome m = refund ? limiter::RefundAll(g.params, g.ptrs, txn.now_ns(), n)
                                   : limiter::TakeAll(g.params, g.ptrs, txn.now_ns(), n);
  if (m.corrupt != 0) return CorruptStatus(KindOf(groups[m.corrupt - 1].params));
  if (m.write) {
    for (size_t i = 0; i < groups.size(); ++i) {
      ApplyWrite(txn, g.raws[i], KindOf(groups[i].params), m.groups[i]);
    }
  }
  LimitsReply reply;
  reply.decision = m.combined.decision;
  reply.binding = m.combined.binding;
  reply.groups.reserve(m.groups.size());
  for (const limiter::Outcome& o : m.groups) reply.groups.push_back(o.decision);
  return reply;
}

std::string RandomToken() {
  char buf[33];
  std::snprintf(buf, sizeof(buf), "%016llx%016llx",
                static_cast<unsigned long long>(internal::RandomU64()),
                static_cast<unsigned long long>(internal::RandomU64()));
  return std::string(buf, 32);
}

}  // namespace

Result<limiter::Decision> Store::Transaction::GcraTake(int db, std::string_view key,
                                                       const limiter::GcraParams& p, int64_t cost) {
  return RunTake(*txn_, db, key, kTextState, [&](auto* st, int64_t now, limiter::Outcome* out) {
    limiter::GcraTakeInto(p, st, now, cost, out);
  });
}

Result<limiter::Decision> Store::Transaction::LeakyTake(int db, std::string_view key,
                                                        const limiter::LeakyParams& p,
                                                        int64_t cost) {
  return RunTake(*txn_, db, key, {ValueKind::kLeaky, false},
                 [&](auto* st, int64_t now, limiter::Outcome* out) {
                   *out = limiter::LeakyTake(p, st, now, cost);
                 });
}

Result<limiter::Decision> Store::Transaction::WindowTake(int db, std::string_view key,
                                                         const limiter::WindowParams& p,
                                                         int64_t cost) {
  return RunTake(*txn_, db, key, kTextState, [&](auto* st, int64_t now, limiter::Outcome* out) {
    limiter::WindowTakeInto(p, st, now, cost, out);
  });
}

Result<limiter::Decision> Store::Transaction::SlidingTake(int db, std::string_view key,
                                                          const limiter::SlidingParams& p,
                                                          int64_t cost) {
  return RunTake(*txn_, db, key, {ValueKind::kSliding, false},
                 [&](auto* st, int64_t now, limiter::Outcome* out) {
                   *out = limiter::SlidingTake(p, st, now, cost);
                 });
}

Result<limiter::Decision> Store::Transaction::LimitRefund(int db, std::string_view key,
                                                          const limiter::LimitParams& p,
                                                          int64_t units) {
  return RunTake(*txn_, db, key, KindOf(p), [&](auto* st, int64_t now, limiter::Outcome* out) {
    *out = limiter::RefundLimit(p, st, now, units);
  });
}

Result<LimitsReply> Store::Transaction::LimitsTake(int db, std::span<const LimitGroup> groups,
                                                   int64_t cost) {
  return RunAll(*txn_, db, groups, cost, /*refund=*/false);
}

Result<LimitsReply> Store::Transaction::LimitsRefund(int db, std::span<const LimitGroup> groups,
                                                     int64_t units) {
  return RunAll(*txn_, db, groups, units, /*refund=*/true);
}

Result<ConcAcquireReply> Store::Transaction::ConcAcquire(int db, std::string_view key,
                                                         const limiter::ConcParams& p,
                                                         std::string_view token) {
  const std::string tok = token.empty() ? RandomToken() : std::string(token);
  auto r = RunTake(*txn_, db, key, {ValueKind::kConc, false},
                   [&](auto* st, int64_t now, limiter::Outcome* out) {
                     *out = limiter::ConcAcquire(p, st, now, tok);
                   });
  if (!r.ok()) return r.status();
  ConcAcquireReply reply;
  reply.decision = *r;
  if (reply.decision.allowed) reply.token = tok;
  return reply;
}

Result<bool> Store::Transaction::ConcRelease(int db, std::string_view key, std::string_view token) {
  auto r = RunTake(*txn_, db, key, {ValueKind::kConc, false},
                   [&](auto* st, int64_t now, limiter::Outcome* out) {
                     *out = limiter::ConcRelease(st, now, token);
                   });
  if (!r.ok()) return r.status();
  return r->allowed;
}

}  // namespace sluice
