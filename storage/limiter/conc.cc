// CONC: a concurrency limit with leases.
//
// In plain words: at most `limit` holders at once. Each holder is a token (arbitrary bytes) with
// the instant its lease ends; a lease that ended without a release is simply dropped (pruned on
// every call), so a crashed holder cannot keep its slot forever. Acquiring with a token that
// already holds a live lease renews it without taking another slot. The key expires when the
// latest lease ends, at which point no holder is left.
//
// Stored form: version byte 1, varint number of holders, then per holder: varint token length,
// the token bytes, varint lease end (ns since the epoch). Tokens are unique.
#include <algorithm>
#include <string>
#include <unordered_set>
#include <vector>

#include "internal.h"

namespace sluice::limiter {

using internal::ClampNonNeg;
using internal::i128;

namespace {

constexpr char kConcVersion = 1;

struct Holder {
  std::string_view token;  // points into the stored value or the caller's token
  int64_t end_ns = 0;      // the lease is live while now < end_ns
};

std::string EncodeConc(const std::vector<Holder>& holders) {
  std::string out;
  out.push_back(kConcVersion);
  internal::PutVarint(&out, holders.size());
  for (const Holder& h : holders) {
    internal::PutVarint(&out, h.token.size());
    out.append(h.token);
    internal::PutVarint(&out, static_cast<uint64_t>(h.end_ns));
  }
  return out;
}

bool DecodeConc(std::string_view in, std::vector<Holder>* holders) {
  if (in.empty() || in[0] != kConcVersion) return false;
  in.remove_prefix(1);
  uint64_t n = 0;
  // Every holder takes at least 2 bytes, which bounds n before anything is allocated.
  if (!internal::GetVarint(&in, &n) || n > in.size() / 2) return false;
  holders->reserve(n);
  std::unordered_set<std::string_view> seen;
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t len = 0;
    if (!internal::GetVarint(&in, &len) || len > in.size()) return false;
    Holder h;
    h.token = in.substr(0, len);
    in.remove_prefix(len);
    if (!internal::GetVarintI64(&in, &h.end_ns)) return false;
    if (!seen.insert(h.token).second) return false;
    holders->push_back(h);
  }
  return in.empty();
}

// Drops leases that have ended by `now_ns`.
void Prune(std::vector<Holder>* holders, int64_t now_ns) {
  std::erase_if(*holders, [&](const Holder& h) { return h.end_ns <= now_ns; });
}

int64_t LatestEnd(const std::vector<Holder>& holders) {
  int64_t latest = 0;
  for (const Holder& h : holders) latest = std::max(latest, h.end_ns);
  return latest;
}

// Writes the holders back (or deletes the key when none remain) with expiry at the latest end.
void WriteHolders(const std::vector<Holder>& holders, Outcome* o) {
  if (holders.empty()) {
    o->write = Outcome::Write::kDelete;
    return;
  }
  o->write = Outcome::Write::kPut;
  o->value = EncodeConc(holders);
  o->expire_at_ms = internal::ExpireAtMs(LatestEnd(holders));
}

}  // namespace

std::string MakeConcParams(int64_t limit, int64_t lease_ns, ConcParams* out) {
  if (limit <= 0) return "invalid limit: must be a positive integer";
  if (lease_ns <= 0 || lease_ns > kMaxDurationNs) {
    return "invalid lease: must be a positive duration of at most 10 years";
  }
  out->limit = limit;
  out->lease_ns = lease_ns;
  return "";
}

Outcome ConcAcquire(const ConcParams& p, const StoredState* state, int64_t now_ns,
                    std::string_view token) {
  Outcome o = internal::OutcomeWithLimit(p.limit);
  std::vector<Holder> holders;
  if (state != nullptr && !DecodeConc(state->value, &holders)) {
    return internal::CorruptOutcome(p.limit);
  }
  Prune(&holders, now_ns);
  const i128 now = now_ns;
  const int64_t lease_end = ClampNonNeg(now + p.lease_ns);
  Decision& d = o.decision;
  auto it = std::find_if(holders.begin(), holders.end(),
                         [&](const Holder& h) { return h.token == token; });
  if (it != holders.end()) {
    // Renew; a lease never shrinks (the clock may have stepped back).
    it->end_ns = std::max(it->end_ns, lease_end);
  } else if (static_cast<int64_t>(holders.size()) < p.limit) {
    holders.push_back({token, lease_end});
  } else {
    d.allowed = false;
    d.remaining = 0;
    int64_t earliest = holders.front().end_ns;
    for (const Holder& h : holders) earliest = std::min(earliest, h.end_ns);
    d.retry_after_ns = ClampNonNeg(earliest - now);
    d.reset_after_ns = ClampNonNeg(LatestEnd(holders) - now);
    return o;
  }
  d.allowed = true;
  d.remaining = ClampNonNeg(static_cast<i128>(p.limit) - static_cast<i128>(holders.size()));
  d.retry_after_ns = 0;
  d.reset_after_ns = ClampNonNeg(LatestEnd(holders) - now);
  WriteHolders(holders, &o);
  return o;
}

Outcome ConcRelease(const StoredState* state, int64_t now_ns, std::string_view token) {
  Outcome o;
  std::vector<Holder> holders;
  if (state != nullptr && !DecodeConc(state->value, &holders)) {
    o.corrupt = true;
    return o;
  }
  Prune(&holders, now_ns);
  auto it = std::find_if(holders.begin(), holders.end(),
                         [&](const Holder& h) { return h.token == token; });
  if (it == holders.end()) {
    o.decision.reset_after_ns = ClampNonNeg(static_cast<i128>(LatestEnd(holders)) - now_ns);
    return o;
  }
  holders.erase(it);
  o.decision.allowed = true;
  o.decision.reset_after_ns = ClampNonNeg(static_cast<i128>(LatestEnd(holders)) - now_ns);
  WriteHolders(holders, &o);
  return o;
}

}  // namespace sluice::limiter
