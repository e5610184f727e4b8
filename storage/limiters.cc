// Limiter takes: each one atomic read -> pure limiter math -> write under the key's lock.
#include <cstdio>

#include "scratch.h"
#include "store_impl.h"
#include "txn.h"

namespace sluice {

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
  if (out.corrupt) {
    return sk.text ? Status::NotInteger() : Status::Corruption("invalid limiter state");
  }
  if (out.write == limiter::Outcome::Write::kPut) {
    txn.Put(raw, sk.kind, out.expire_at_ms, out.value);
  } else if (out.write == limiter::Outcome::Write::kDelete) {
    txn.Delete(raw);
  }
  return out.decision;
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
