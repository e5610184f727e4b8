// The geo searches: GEOSEARCH, GEOSEARCHSTORE, GEORADIUS, GEORADIUSBYMEMBER and their _RO forms,
// one parser and one search as in Redis: the 9 cells around the centre (geo::SearchCells) are
// scanned in Redis's order as score ranges, each point kept when inside the shape; then the
// optional sort by distance, COUNT, and the reply or the stored sorted set.
#include "server/commands/geo_search.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "server/commands/commands.h"
#include "server/commands/notify_events.h"
#include "server/commands/zset_args.h"
#include "server/core/args.h"
#include "server/core/client_state.h"
#include "server/core/errors.h"
#include "sluice/store.h"

namespace sluice::server {

namespace {

enum SearchFlags : unsigned {
  kFromCoords = 1u << 0,  // GEORADIUS: lon lat radius unit
  kFromMember = 1u << 1,  // GEORADIUSBYMEMBER: member radius unit
  kNoStore = 1u << 2,     // the _RO forms
  kSearch = 1u << 3,      // GEOSEARCH's FROM.../BY... syntax
  kSearchStore = 1u << 4  // GEOSEARCHSTORE: destination first, STOREDIST without a key
};

enum class Order { kNone, kAsc, kDesc };

struct SearchArgs {
  geo::Shape shape;
  bool with_dist = false, with_hash = false, with_coord = false;
  bool from_member = false, from_lonlat = false, by_radius = false, by_box = false;
  bool any = false;
  bool store_dist = false;
  Order order = Order::kNone;
  int64_t count = 0;  // 0: all
  std::optional<std::string_view> store;
};

struct Found {
  std::string member;
  double score = 0;
  double dist = 0;  // meters, then the reply's unit
  geo::Point point;
};

Status ParseRadius(Args args, size_t at, geo::Shape* shape) {
  std::optional<double> r = ParseScore(args[at]);
  if (!r) return GeoNeedNumeric("radius");
  if (*r < 0) return GeoRadiusNegative();
  std::optional<double> unit = ParseGeoUnit(args[at + 1]);
  if (!unit) return GeoBadUnit();
  shape->box = false;
  shape->radius = *r;
  shape->to_meters = *unit;
  return Status::Ok();
}

Status ParseBox(Args args, size_t at, geo::Shape* shape) {
  std::optional<double> w = ParseScore(args[at]);
  if (!w) return GeoNeedNumeric("width");
  std::optional<double> h = ParseScore(args[at + 1]);
  if (!h) return GeoNeedNumeric("height");
  if (*h < 0 || *w < 0) return GeoBoxNegative();
  std::optional<double> unit = ParseGeoUnit(args[at + 2]);
  if (!unit) return GeoBadUnit();
  shape->box = true;
  shape->width = *w;
  shape->height = *h;
  shape->to_meters = *unit;
  return Status::Ok();
}

// The centre of a FROMMEMBER / GEORADIUSBYMEMBER search.
Status MemberCentre(CommandContext& ctx, std::string_view key, std::string_view member,
                    geo::Point* centre) {
  Result<std::optional<double>> score = ctx.txn().ZScore(ctx.client.db, key, member);
  if (!score.ok()) return score.status();
  if (!score->has_value()) return GeoNoMember();
  *centre = *geo::Decode(**score);
  return Status::Ok();
}

// The options after the fixed arguments, in Redis's order of checks.
Status ParseOptions(CommandContext& ctx, Args args, size_t base, unsigned flags, bool key_exists,
                    std::string_view key, SearchArgs* o) {
  const size_t n = args.size();
  for (size_t i = base; i < n; ++i) {
    const std::string_view a = args[i];
    const size_t left = n - i - 1;
    const bool search = (flags & kSearch) != 0;
    const bool can_store = !(flags & kNoStore) && !search;
    if (EqualsIgnoreCase(a, "withdist")) {
      o->with_dist = true;
    } else if (EqualsIgnoreCase(a, "withhash")) {
      o->with_hash = true;
    } else if (EqualsIgnoreCase(a, "withcoord")) {
      o->with_coord = true;
    } else if (EqualsIgnoreCase(a, "any")) {
      o->any = true;
    } else if (EqualsIgnoreCase(a, "asc")) {
      o->order = Order::kAsc;
    } else if (EqualsIgnoreCase(a, "desc")) {
      o->order = Order::kDesc;
    } else if (EqualsIgnoreCase(a, "count") && left >= 1) {
      std::optional<int64_t> c = ParseInt64(args[++i]);
      if (!c) return NotAnInteger();
      if (*c <= 0) return GeoCountNotPositive();
      o->count = *c;
    } else if ((EqualsIgnoreCase(a, "store") || EqualsIgnoreCase(a, "storedist")) && left >= 1 &&
               can_store) {
      o->store_dist = EqualsIgnoreCase(a, "storedist");
      o->store = args[++i];
    } else if (EqualsIgnoreCase(a, "storedist") && search && (flags & kSearchStore)) {
      o->store_dist = true;
    } else if (EqualsIgnoreCase(a, "frommember") && left >= 1 && search && !o->from_lonlat) {
      if (key_exists) {
        if (Status s = MemberCentre(ctx, key, args[i + 1], &o->shape.centre); !s.ok()) return s;
      }
      o->from_member = true;
      ++i;
    } else if (EqualsIgnoreCase(a, "fromlonlat") && left >= 2 && search && !o->from_member) {
      if (Status s = ParseLonLat(args[i + 1], args[i + 2], &o->shape.centre); !s.ok()) return s;
      o->from_lonlat = true;
      i += 2;
    } else if (EqualsIgnoreCase(a, "byradius") && left >= 2 && search && !o->by_box) {
      if (Status s = ParseRadius(args, i + 1, &o->shape); !s.ok()) return s;
      o->by_radius = true;
      i += 2;
    } else if (EqualsIgnoreCase(a, "bybox") && left >= 3 && search && !o->by_radius) {
      if (Status s = ParseBox(args, i + 1, &o->shape); !s.ok()) return s;
      o->by_box = true;
      i += 3;
    } else {
      return SyntaxError();
    }
  }
  if (o->store && (o->with_dist || o->with_hash || o->with_coord)) {
    return GeoStoreWith((flags & kSearchStore) != 0);
  }
  if ((flags & kSearch) && !(o->from_member || o->from_lonlat)) return GeoNeedFrom(args[0]);
  if ((flags & kSearch) && !(o->by_radius || o->by_box)) return GeoNeedBy(args[0]);
  if (o->any && o->count == 0) return GeoAnyNeedsCount();
  return Status::Ok();
}

// The points inside the shape, cell by cell in Redis's order, each cell in score order;
// with `limit` (ANY), the scan stops once it has that many.
Result<std::vector<Found>> Scan(CommandContext& ctx, std::string_view key, const geo::Shape& shape,
                                int64_t limit) {
  std::vector<Found> found;
  for (const geo::Cell& cell : geo::SearchCells(shape)) {
    if (cell.empty()) continue;
    if (limit > 0 && static_cast<int64_t>(found.size()) >= limit) break;
    double min = 0;
    double max = 0;
    geo::ScoreRange(cell, &min, &max);
    auto members = ctx.txn().ZRangeByScore(ctx.client.db, key, {min, false}, {max, true},
                                           /*rev=*/false, 0, -1);
    if (!members.ok()) return members.status();
    for (auto& [member, score] : *members) {
      Found f;
      f.point = *geo::Decode(score);
      if (!geo::Within(shape, f.point, &f.dist)) continue;
      f.member = std::move(member);
      f.score = score;
      found.push_back(std::move(f));
      if (limit > 0 && static_cast<int64_t>(found.size()) >= limit) break;
    }
  }
  return found;
}

void ReplyFound(CommandContext& ctx, const SearchArgs& o, const std::vector<Found>& found) {
  const size_t options = (o.with_dist ? 1 : 0) + (o.with_hash ? 1 : 0) + (o.with_coord ? 1 : 0);
  ctx.out.Array(found.size());
  for (const Found& f : found) {
    if (options > 0) ctx.out.Array(options + 1);
    ctx.out.Bulk(f.member);
    if (o.with_dist) ctx.out.Bulk(geo::DistanceText(f.dist));
    if (o.with_hash) ctx.out.Integer(static_cast<int64_t>(f.score));
    if (o.with_coord) {
      ctx.out.Array(2);
      ReplyCoord(ctx.out, f.point.lon);
      ReplyCoord(ctx.out, f.point.lat);
    }
  }
}

Status StoreFound(CommandContext& ctx, const SearchArgs& o, const std::vector<Found>& found) {
  const std::string_view dst[] = {*o.store};
  if (auto d = ctx.txn().Del(ctx.client.db, dst); !d.ok()) return d.status();
  if (found.empty()) return Status::Ok();
  std::vector<std::pair<double, std::string_view>> pairs;
  for (const Found& f : found) pairs.emplace_back(o.store_dist ? f.dist : f.score, f.member);
  auto r = ctx.txn().ZAdd(ctx.client.db, *o.store, {}, pairs);
  return r.ok() ? Status::Ok() : r.status();
}

void SearchGeneric(CommandContext& ctx, Args args, size_t key_at, unsigned flags) {
  const std::string_view key = args[key_at];
  Result<std::optional<ValueKind>> type = ctx.txn().Type(ctx.client.db, key);
  if (!type.ok()) return ReplyError(ctx.out, type.status());
  if (type->has_value() && **type != ValueKind::kZSet) {
    return ReplyError(ctx.out, Status::WrongType());
  }
  const bool exists = type->has_value();
  SearchArgs o;
  size_t base = 2;
  if (flags & kFromCoords) {
    base = 6;
    if (Status s = ParseLonLat(args[2], args[3], &o.shape.centre); !s.ok()) {
      return ReplyError(ctx.out, s);
    }
    if (Status s = ParseRadius(args, 4, &o.shape); !s.ok()) return ReplyError(ctx.out, s);
  } else if (flags & kFromMember) {
    base = 5;
    if (exists) {
      if (Status s = MemberCentre(ctx, key, args[2], &o.shape.centre); !s.ok()) {
        return ReplyError(ctx.out, s);
      }
      if (Status s = ParseRadius(args, 3, &o.shape); !s.ok()) return ReplyError(ctx.out, s);
    }
  } else if (flags & kSearchStore) {
    base = 3;
    o.store = args[1];
  }
  if (Status s = ParseOptions(ctx, args, base, flags, exists, key, &o); !s.ok()) {
    return ReplyError(ctx.out, s);
  }
  std::vector<Found> found;
  if (exists) {
    if (o.count != 0 && o.order == Order::kNone && !o.any) o.order = Order::kAsc;
    Result<std::vector<Found>> r = Scan(ctx, key, o.shape, o.any ? o.count : 0);
    if (!r.ok()) return ReplyError(ctx.out, r.status());
    found = std::move(*r);
  }
  if (o.order != Order::kNone) {
    const bool asc = o.order == Order::kAsc;
    std::stable_sort(found.begin(), found.end(), [asc](const Found& a, const Found& b) {
      return asc ? a.dist < b.dist : a.dist > b.dist;
    });
  }
  if (o.count > 0 && static_cast<int64_t>(found.size()) > o.count) {
    found.resize(static_cast<size_t>(o.count));
  }
  for (Found& f : found) f.dist /= o.shape.to_meters;
  if (!o.store) return ReplyFound(ctx, o, found);
  const bool existed = StoreDestinationExisted(ctx, *o.store);
  if (Status s = StoreFound(ctx, o, found); !s.ok()) return ReplyError(ctx.out, s);
  NotifyStore(ctx, Result<int64_t>(static_cast<int64_t>(found.size())), kNotifyZset,
              (flags & kSearchStore) ? "geosearchstore" : "georadiusstore", *o.store, existed);
  ctx.out.Integer(static_cast<int64_t>(found.size()));
}

void GeoRadius(CommandContext& ctx, Args args) { SearchGeneric(ctx, args, 1, kFromCoords); }
void GeoRadiusRo(CommandContext& ctx, Args args) {
  SearchGeneric(ctx, args, 1, kFromCoords | kNoStore);
}
void GeoRadiusByMember(CommandContext& ctx, Args args) { SearchGeneric(ctx, args, 1, kFromMember); }
void GeoRadiusByMemberRo(CommandContext& ctx, Args args) {
  SearchGeneric(ctx, args, 1, kFromMember | kNoStore);
}
void GeoSearch(CommandContext& ctx, Args args) { SearchGeneric(ctx, args, 1, kSearch); }
void GeoSearchStore(CommandContext& ctx, Args args) {
  SearchGeneric(ctx, args, 2, kSearch | kSearchStore);
}

// GEORADIUS's keys: the source, and a STORE/STOREDIST destination.
void GeoRadiusKeys(Args args, std::vector<int>* positions) {
  positions->push_back(1);
  for (size_t i = 5; i + 1 < args.size(); ++i) {
    if (EqualsIgnoreCase(args[i], "store") || EqualsIgnoreCase(args[i], "storedist")) {
      positions->push_back(static_cast<int>(i + 1));
      ++i;
    }
  }
}

void AddSearch(CommandTable& table, const char* name, int arity, uint32_t flags, KeyRange keys,
               Handler handler, const char* summary, const char* since, const char* hint,
               KeyFinder finder = nullptr) {
  CommandSpec spec = MakeSpec("geo", name, arity, flags, keys, handler, summary, since, hint);
  spec.find_keys = finder;
  table.Add(std::move(spec));
}

}  // namespace

void RegisterGeoSearchCommands(CommandTable& table) {
  constexpr const char* kRadiusOptions =
      "[WITHCOORD] [WITHDIST] [WITHHASH] [COUNT count [ANY]] [ASC|DESC]";
  AddSearch(table, "georadius", -6, kWrite | kDenyOom, {1, 1, 1}, GeoRadius,
            "Query a sorted set representing a geospatial index to fetch members matching a "
            "given maximum distance from a point",
            "3.2.0",
            (std::string("key longitude latitude radius M|KM|FT|MI ") + kRadiusOptions +
             " [STORE key] [STOREDIST key]")
                .c_str(),
            GeoRadiusKeys);
  AddSearch(table, "georadius_ro", -6, kReadOnly, {1, 1, 1}, GeoRadiusRo,
            "A read-only variant for GEORADIUS", "3.2.10",
            (std::string("key longitude latitude radius M|KM|FT|MI ") + kRadiusOptions).c_str());
  AddSearch(table, "georadiusbymember", -5, kWrite | kDenyOom, {1, 1, 1}, GeoRadiusByMember,
            "Query a sorted set representing a geospatial index to fetch members matching a "
            "given maximum distance from a member",
            "3.2.0",
            (std::string("key member radius M|KM|FT|MI ") + kRadiusOptions +
             " [STORE key] [STOREDIST key]")
                .c_str(),
            GeoRadiusKeys);
  AddSearch(table, "georadiusbymember_ro", -5, kReadOnly, {1, 1, 1}, GeoRadiusByMemberRo,
            "A read-only variant for GEORADIUSBYMEMBER", "3.2.10",
            (std::string("key member radius M|KM|FT|MI ") + kRadiusOptions).c_str());
  AddSearch(table, "geosearch", -7, kReadOnly, {1, 1, 1}, GeoSearch,
            "Query a sorted set representing a geospatial index to fetch members inside an "
            "area of a box or a circle.",
            "6.2.0",
            "key FROMMEMBER member|FROMLONLAT longitude latitude BYRADIUS radius M|KM|FT|MI|BYBOX "
            "width height M|KM|FT|MI [ASC|DESC] [COUNT count [ANY]] [WITHCOORD] [WITHDIST] "
            "[WITHHASH]");
  AddSearch(table, "geosearchstore", -8, kWrite | kDenyOom, {1, 2, 1}, GeoSearchStore,
            "Query a sorted set representing a geospatial index to fetch members inside an "
            "area of a box or a circle, and store the result in another key.",
            "6.2.0",
            "destination source FROMMEMBER member|FROMLONLAT longitude latitude BYRADIUS radius "
            "M|KM|FT|MI|BYBOX width height M|KM|FT|MI [ASC|DESC] [COUNT count [ANY]] [STOREDIST]");
}

}  // namespace sluice::server
