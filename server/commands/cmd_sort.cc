// SORT and SORT_RO over lists, sets and sorted sets, as Redis 7.0: BY (a constant pattern skips
// the sort; `->field` reads a hash field), GET (`#` is the element itself), LIMIT, ASC|DESC,
// ALPHA, STORE (SORT only). Pattern keys are read as the command runs, undeclared, as in Redis.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/commands/commands.h"
#include "server/commands/notify_events.h"
#include "server/commands/replies.h"
#include "server/core/args.h"
#include "server/core/client_state.h"
#include "server/core/errors.h"
#include "sluice/store.h"

namespace sluice::server {

namespace {

struct SortArgs {
  bool desc = false;
  bool alpha = false;
  int64_t limit_start = 0;
  int64_t limit_count = -1;
  std::optional<std::string_view> by;
  std::vector<std::string_view> gets;
  std::optional<std::string_view> store;
  bool dont_sort = false;  // BY without '*': keep the collection's own order
};

// Options in Redis's order of checks; a bad LIMIT number is Redis's integer error.
Status ParseSortArgs(Args args, bool readonly, SortArgs* out) {
  for (size_t j = 2; j < args.size(); ++j) {
    const size_t left = args.size() - j - 1;
    const std::string_view a = args[j];
    if (EqualsIgnoreCase(a, "asc")) {
      out->desc = false;
    } else if (EqualsIgnoreCase(a, "desc")) {
      out->desc = true;
    } else if (EqualsIgnoreCase(a, "alpha")) {
      out->alpha = true;
    } else if (EqualsIgnoreCase(a, "limit") && left >= 2) {
      std::optional<int64_t> start = ParseInt64(args[j + 1]);
      std::optional<int64_t> count = ParseInt64(args[j + 2]);
      if (!start || !count) return NotAnInteger();
      out->limit_start = *start;
      out->limit_count = *count;
      j += 2;
    } else if (!readonly && EqualsIgnoreCase(a, "store") && left >= 1) {
      out->store = args[++j];
    } else if (EqualsIgnoreCase(a, "by") && left >= 1) {
      out->by = args[++j];
      out->dont_sort = out->by->find('*') == std::string_view::npos;
    } else if (EqualsIgnoreCase(a, "get") && left >= 1) {
      out->gets.push_back(args[++j]);
    } else {
      return SyntaxError();
    }
  }
  return Status::Ok();
}

// Redis's lookupKeyByPattern: `#` is the element; otherwise the first '*' takes the element,
// and a "->field" after it (with a field name) reads that hash field. A pattern without '*', a
// missing key, or a key of the wrong type gives nullopt.
Result<std::optional<std::string>> LookupByPattern(CommandContext& ctx, std::string_view pattern,
                                                   std::string_view element) {
  if (pattern == "#") return std::optional<std::string>(std::string(element));
  const size_t star = pattern.find('*');
  if (star == std::string_view::npos) return std::optional<std::string>();
  std::string_view field;
  std::string_view rest = pattern.substr(star + 1);
  const size_t arrow = rest.find("->");
  if (arrow != std::string_view::npos && arrow + 2 < rest.size()) {
    field = rest.substr(arrow + 2);
    rest = rest.substr(0, arrow);
  }
  std::string key(pattern.substr(0, star));
  key.append(element);
  key.append(rest);
  Result<std::optional<std::string>> r =
      field.empty() ? ctx.txn().Get(ctx.client.db, key) : ctx.txn().HGet(ctx.client.db, key, field);
  if (!r.ok() && r.status().code() == Code::kWrongType) return std::optional<std::string>();
  return r;
}

struct SortItem {
  std::string element;
  double score = 0;
  std::optional<std::string> by_value;  // ALPHA with BY: the compared value (nullopt first)
};

// Redis's binary string order: bytes as unsigned, then the shorter first.
int CompareBytes(std::string_view a, std::string_view b) {
  const int c = a.compare(b);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

int CompareItems(const SortItem& a, const SortItem& b, const SortArgs& o) {
  int cmp = 0;
  if (!o.alpha) {
    cmp = a.score > b.score ? 1 : (a.score < b.score ? -1 : CompareBytes(a.element, b.element));
  } else if (o.by) {
    if (!a.by_value || !b.by_value) {
      cmp = a.by_value == b.by_value ? 0 : (!a.by_value ? -1 : 1);
    } else {
      cmp = CompareBytes(*a.by_value, *b.by_value);
    }
  } else {
    cmp = CompareBytes(a.element, b.element);
  }
  return o.desc ? -cmp : cmp;
}

// The elements in the collection's own order (DESC with a constant BY: reversed, as Redis
// walks lists and sorted sets from the tail then). A missing key is an empty list.
Result<std::vector<std::string>> LoadElements(CommandContext& ctx, std::string_view key,
                                              const SortArgs& o, bool* is_set) {
  Result<std::optional<ValueKind>> type = ctx.txn().Type(ctx.client.db, key);
  if (!type.ok()) return type.status();
  std::vector<std::string> out;
  if (!type->has_value()) return out;
  const bool reverse = o.dont_sort && o.desc;
  switch (**type) {
    case ValueKind::kList: {
      auto r = ctx.txn().LRange(ctx.client.db, key, 0, -1);
      if (!r.ok()) return r.status();
      out = std::move(*r);
      if (reverse) std::reverse(out.begin(), out.end());
      return out;
    }
    case ValueKind::kSet: {
      *is_set = true;
      return ctx.txn().SMembers(ctx.client.db, key);
    }
    case ValueKind::kZSet: {
      auto r = ctx.txn().ZRangeByRank(ctx.client.db, key, 0, -1, reverse);
      if (!r.ok()) return r.status();
      for (auto& [member, score] : *r) out.push_back(std::move(member));
      return out;
    }
    default:
      return Status::WrongType();
  }
}

// Redis's strtod rule for a numeric sort value: the whole text must parse (leading spaces and
// an empty string are fine: ""  is 0), not NaN, not out of range.
bool ScoreOf(const std::string& text, double* score) {
  char* end = nullptr;
  errno = 0;
  *score = std::strtod(text.c_str(), &end);
  return *end == '\0' && errno != ERANGE && !std::isnan(*score);
}

// Fills scores (or ALPHA's BY values) and sorts. False when a value is not a number.
Result<bool> SortItems(CommandContext& ctx, const SortArgs& o, std::vector<SortItem>& items) {
  bool numbers_ok = true;
  for (SortItem& item : items) {
    std::optional<std::string> by_value;
    if (o.by) {
      auto r = LookupByPattern(ctx, *o.by, item.element);
      if (!r.ok()) return r.status();
      if (!r->has_value()) continue;  // missing: score 0, ALPHA value absent
      by_value = std::move(*r);
    }
    if (o.alpha) {
      item.by_value = std::move(by_value);
    } else if (!ScoreOf(by_value ? *by_value : item.element, &item.score)) {
      numbers_ok = false;
    }
  }
  std::stable_sort(items.begin(), items.end(), [&o](const SortItem& a, const SortItem& b) {
    return CompareItems(a, b, o) < 0;
  });
  return numbers_ok;
}

// Redis's LIMIT arithmetic: [start, end] within n items (end < start: none).
std::pair<int64_t, int64_t> LimitRange(const SortArgs& o, int64_t n) {
  int64_t start = std::min(std::max<int64_t>(o.limit_start, 0), n);
  const int64_t count = std::min(std::max<int64_t>(o.limit_count, -1), n);
  int64_t end = count < 0 ? n - 1 : start + count - 1;
  if (start >= n) {
    start = n - 1;
    end = n - 2;
  }
  if (end >= n) end = n - 1;
  return {start, end};
}

// The values the reply (or STORE) holds for one element: itself, or one per GET pattern.
Status Project(CommandContext& ctx, const SortArgs& o, const std::string& element,
               std::vector<std::optional<std::string>>* out) {
  if (o.gets.empty()) {
    out->emplace_back(element);
    return Status::Ok();
  }
  for (std::string_view pattern : o.gets) {
    auto r = LookupByPattern(ctx, pattern, element);
    if (!r.ok()) return r.status();
    out->push_back(std::move(*r));
  }
  return Status::Ok();
}

Status StoreResult(CommandContext& ctx, std::string_view dst,
                   const std::vector<std::optional<std::string>>& values) {
  std::vector<std::string_view> elements;
  elements.reserve(values.size());
  for (const auto& v : values) elements.push_back(v ? std::string_view(*v) : std::string_view());
  const std::string_view keys[] = {dst};
  if (Result<int64_t> d = ctx.txn().Del(ctx.client.db, keys); !d.ok()) return d.status();
  if (elements.empty()) return Status::Ok();
  Result<int64_t> r = ctx.txn().ListPush(ctx.client.db, dst, Store::Transaction::ListEnd::kRight,
                                         elements, /*only_if_exists=*/false);
  return r.ok() ? Status::Ok() : r.status();
}

void SortGeneric(CommandContext& ctx, Args args, bool readonly) {
  SortArgs o;
  if (Status s = ParseSortArgs(args, readonly, &o); !s.ok()) return ReplyError(ctx.out, s);
  bool is_set = false;
  Result<std::vector<std::string>> elements = LoadElements(ctx, args[1], o, &is_set);
  if (!elements.ok()) return ReplyError(ctx.out, elements.status());
  // A set has no order of its own: stored results get a stable (ALPHA) order, as in Redis.
  if (o.dont_sort && is_set && o.store) {
    o.dont_sort = false;
    o.alpha = true;
    o.by.reset();
  }
  std::vector<SortItem> items(elements->size());
  for (size_t i = 0; i < items.size(); ++i) items[i].element = std::move((*elements)[i]);
  bool numbers_ok = true;
  if (!o.dont_sort) {
    Result<bool> sorted = SortItems(ctx, o, items);
    if (!sorted.ok()) return ReplyError(ctx.out, sorted.status());
    numbers_ok = *sorted;
  }
  if (!numbers_ok) {
    return ReplyError(ctx.out, SortNotDouble());
  }
  const auto [start, end] = LimitRange(o, static_cast<int64_t>(items.size()));
  std::vector<std::optional<std::string>> values;
  for (int64_t j = start; j <= end; ++j) {
    if (Status s = Project(ctx, o, items[static_cast<size_t>(j)].element, &values); !s.ok()) {
      return ReplyError(ctx.out, s);
    }
  }
  if (o.store) {
    const bool existed = StoreDestinationExisted(ctx, *o.store);
    if (Status s = StoreResult(ctx, *o.store, values); !s.ok()) return ReplyError(ctx.out, s);
    NotifyStore(ctx, Result<int64_t>(static_cast<int64_t>(values.size())), kNotifyList, "sortstore",
                *o.store, existed);
    return ctx.out.Integer(static_cast<int64_t>(values.size()));
  }
  ctx.out.Array(values.size());
  for (const auto& v : values) ReplyOptional(ctx.out, v);
}

void Sort(CommandContext& ctx, Args args) { SortGeneric(ctx, args, /*readonly=*/false); }
void SortRo(CommandContext& ctx, Args args) { SortGeneric(ctx, args, /*readonly=*/true); }

// SORT's keys: the sorted key, and STORE's destination when given (the last STORE's, the one
// SORT writes, as Redis's sortGetKeys).
void SortKeys(Args args, std::vector<int>* positions) {
  positions->push_back(1);
  int store = 0;
  for (size_t j = 2; j + 1 < args.size(); ++j) {
    if (EqualsIgnoreCase(args[j], "store")) store = static_cast<int>(j + 1);
    if (EqualsIgnoreCase(args[j], "limit")) {
      j += 2;
    } else if (EqualsIgnoreCase(args[j], "by") || EqualsIgnoreCase(args[j], "get") ||
               EqualsIgnoreCase(args[j], "store")) {
      ++j;
    }
  }
  if (store != 0) positions->push_back(store);
}

// SORT_RO's key: the sorted key. A finder, not a range, so that COMMAND INFO shows it
// movablekeys as Redis does (its BY/GET patterns name keys Redis's key spec leaves out).
void SortRoKeys(Args, std::vector<int>* positions) { positions->push_back(1); }

}  // namespace

void RegisterSortCommands(CommandTable& table) {
  CommandSpec sort = MakeSpec(
      "generic", "sort", -2, kWrite | kDenyOom, {1, 1, 1}, Sort,
      "Sort the elements in a list, set or sorted set", "1.0.0",
      "key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] [ASC|DESC] [ALPHA] "
      "[STORE destination]");
  sort.find_keys = SortKeys;
  table.Add(std::move(sort));
  CommandSpec sort_ro = MakeSpec(
      "generic", "sort_ro", -2, kReadOnly, {1, 1, 1}, SortRo,
      "Sort the elements in a list, set or sorted set. Read-only variant of SORT.", "7.0.0",
      "key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] [ASC|DESC] [ALPHA]");
  sort_ro.find_keys = SortRoKeys;
  table.Add(std::move(sort_ro));
}

}  // namespace sluice::server
