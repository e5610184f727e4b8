// ZUNION, ZINTER, ZDIFF, their STORE forms and ZINTERCARD, as Redis 7.0 computes them: inputs
// are sorted sets or plain sets (every member scored 1), a missing key is empty; union and
// intersection visit the inputs from the smallest to the largest (a stable sort by size), which
// fixes the order in which scores are aggregated; a weighted score or a sum that is NaN
// (0 * inf, inf + -inf) becomes 0. Each call reads every input whole: O(sum of the sizes).
#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "collection.h"
#include "store_impl.h"
#include "txn.h"
#include "zset_elements.h"

namespace sluice {

using internal::Collection;
using internal::ElementCf;
using internal::Txn;
using ScoredMembers = Store::Transaction::ScoredMembers;
using ZAggregate = Store::Transaction::ZAggregate;
using ZAlgebraArgs = Store::Transaction::ZAlgebraArgs;
using SetOp = Store::Transaction::SetOp;

namespace {

struct Input {
  ScoredMembers members;                          // in element order
  std::unordered_map<std::string, double> index;  // member -> score; built for lookups only
  double weight = 1;
};

// One input's members: a sorted set's with their scores, a set's scored 1. kWrongType for any
// other kind.
Result<ScoredMembers> ReadInput(Txn& txn, int db, std::string_view key) {
  auto z = internal::OpenZSet(txn, db, key, false);
  if (z.ok()) return internal::ZRankRange(*z, 0, -1, false);
  if (z.status().code() != Code::kWrongType) return z.status();
  auto s = Collection::Open(txn, db, key, ValueKind::kSet, false);
  if (!s.ok()) return s.status();
  ScoredMembers out;
  if (!s->exists()) return out;
  auto it = s->NewIterator(ElementCf::kSet);
  for (it->SeekToFirst(); it->Valid(); it->Next()) out.emplace_back(s->ElementOf(it->key()), 1.0);
  if (!it->status().ok()) return internal::FromRocks(it->status());
  return out;
}

// Every key's type is checked before anything is combined, as Redis does.
Result<std::vector<Input>> ReadInputs(Txn& txn, int db, const ZAlgebraArgs& args) {
  std::vector<Input> inputs(args.keys.size());
  for (size_t i = 0; i < args.keys.size(); ++i) {
    auto members = ReadInput(txn, db, args.keys[i]);
    if (!members.ok()) return members.status();
    inputs[i].members = std::move(*members);
    if (i < args.weights.size()) inputs[i].weight = args.weights[i];
  }
  return inputs;
}

void Aggregate(double* target, double value, ZAggregate how) {
  switch (how) {
    case ZAggregate::kSum:
      *target += value;
      if (std::isnan(*target)) *target = 0;
      break;
    case ZAggregate::kMin:
      *target = value < *target ? value : *target;
      break;
    case ZAggregate::kMax:
      *target = value > *target ? value : *target;
      break;
  }
}

double Weighted(double score, double weight) {
  const double v = score * weight;
  return std::isnan(v) ? 0 : v;
}

void SortBySize(std::vector<Input>* inputs) {
  std::stable_sort(inputs->begin(), inputs->end(), [](const Input& a, const Input& b) {
    return a.members.size() < b.members.size();
  });
}

void BuildIndex(Input* in) {
  in->index.reserve(in->members.size());
  for (const auto& [m, s] : in->members) in->index.emplace(m, s);
}

// The intersection, stopping once `limit` (> 0) members are found.
ScoredMembers Intersect(std::vector<Input>& inputs, ZAggregate how, int64_t limit) {
  ScoredMembers out;
  SortBySize(&inputs);
  for (size_t j = 1; j < inputs.size(); ++j) BuildIndex(&inputs[j]);
  for (const auto& [member, score] : inputs[0].members) {
    double total = Weighted(score, inputs[0].weight);
    bool everywhere = true;
    for (size_t j = 1; j < inputs.size() && everywhere; ++j) {
      auto found = inputs[j].index.find(member);
      everywhere = found != inputs[j].index.end();
      if (everywhere) Aggregate(&total, found->second * inputs[j].weight, how);
    }
    if (!everywhere) continue;
    out.emplace_back(member, total);
    if (limit > 0 && static_cast<int64_t>(out.size()) >= limit) break;
  }
  return out;
}

ScoredMembers Union(std::vector<Input>& inputs, ZAggregate how) {
  SortBySize(&inputs);
  std::unordered_map<std::string, double> acc;
  for (const Input& in : inputs) {
    for (const auto& [member, score] : in.members) {
      const double v = Weighted(score, in.weight);
      auto [at, added] = acc.emplace(member, v);
      if (!added) Aggregate(&at->second, v, how);
    }
  }
  return ScoredMembers(acc.begin(), acc.end());
}

ScoredMembers Difference(std::vector<Input>& inputs) {
  for (size_t j = 1; j < inputs.size(); ++j) BuildIndex(&inputs[j]);
  ScoredMembers out;
  for (const auto& [member, score] : inputs[0].members) {
    bool elsewhere = false;
    for (size_t j = 1; j < inputs.size() && !elsewhere; ++j) {
      elsewhere = inputs[j].index.count(member) != 0;
    }
    if (!elsewhere) out.emplace_back(member, score);
  }
  return out;
}

// Redis's order: score, then member bytes.
void SortResult(ScoredMembers* r) {
  std::sort(r->begin(), r->end(), [](const auto& a, const auto& b) {
    return a.second < b.second || (a.second == b.second && a.first < b.first);
  });
}

Result<ScoredMembers> Combine(Txn& txn, int db, const ZAlgebraArgs& args) {
  auto inputs = ReadInputs(txn, db, args);
  if (!inputs.ok()) return inputs.status();
  ScoredMembers r;
  if (!inputs->empty()) {
    switch (args.op) {
      case SetOp::kInter:
        r = Intersect(*inputs, args.aggregate, 0);
        break;
      case SetOp::kUnion:
        r = Union(*inputs, args.aggregate);
        break;
      case SetOp::kDiff:
        r = Difference(*inputs);
        break;
    }
  }
  SortResult(&r);
  return r;
}

}  // namespace

Result<ScoredMembers> Store::Transaction::ZSetAlgebra(int db, const ZAlgebraArgs& args) {
  Txn::SnapshotReads one_state(*txn_);  // the metadata and elements of one moment
  return Combine(*txn_, db, args);
}

Result<int64_t> Store::Transaction::ZSetAlgebraStore(int db, std::string_view dst,
                                                     const ZAlgebraArgs& args) {
  auto r = Combine(*txn_, db, args);
  if (!r.ok()) return r.status();
  if (Status c = ClaimWrite(db, dst); !c.ok()) return c;
  Collection out = Collection::NewAt(*txn_, db, dst, ValueKind::kZSet);
  out.StartInline();
  for (const auto& [member, score] : *r) {
    if (Status s = internal::PutZMember(out, member, score, std::nullopt); !s.ok()) return s;
  }
  if (Status s = internal::SaveZSet(out); !s.ok()) return s;
  return static_cast<int64_t>(r->size());
}

Result<int64_t> Store::Transaction::ZInterCard(int db, std::span<const std::string_view> keys,
                                               int64_t limit) {
  Txn::SnapshotReads one_state(*txn_);  // the metadata and elements of one moment
  ZAlgebraArgs args;
  args.op = SetOp::kInter;
  args.keys = keys;
  auto inputs = ReadInputs(*txn_, db, args);
  if (!inputs.ok()) return inputs.status();
  if (inputs->empty()) return int64_t{0};
  return static_cast<int64_t>(Intersect(*inputs, ZAggregate::kSum, limit).size());
}

}  // namespace sluice
