// Geo commands over sorted sets: GEOADD, GEOPOS, GEODIST, GEOHASH here; the searches
// (GEOSEARCH, GEOSEARCHSTORE, GEORADIUS*) in geo_search.cc. Scores are Redis's 52-bit geohashes
// (geohash.h), so a key written here reads the same through ZRANGE as one written by Redis.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "server/commands/commands.h"
#include "server/commands/geo_search.h"
#include "server/commands/geohash.h"
#include "server/commands/notify_events.h"
#include "server/commands/replies.h"
#include "server/commands/zset_args.h"
#include "server/core/args.h"
#include "server/core/client_state.h"
#include "server/core/errors.h"
#include "sluice/store.h"

namespace sluice::server {

Status ParseLonLat(std::string_view lon_text, std::string_view lat_text, geo::Point* p) {
  std::optional<double> lon = ParseScore(lon_text);
  if (!lon) return NotAFloat();
  std::optional<double> lat = ParseScore(lat_text);
  if (!lat) return NotAFloat();
  if (!geo::ValidLonLat(*lon, *lat)) return GeoBadLonLat(*lon, *lat);
  *p = geo::Point{*lon, *lat};
  return Status::Ok();
}

std::optional<double> ParseGeoUnit(std::string_view unit) {
  if (EqualsIgnoreCase(unit, "m")) return 1;
  if (EqualsIgnoreCase(unit, "km")) return 1000;
  if (EqualsIgnoreCase(unit, "ft")) return 0.3048;
  if (EqualsIgnoreCase(unit, "mi")) return 1609.34;
  return std::nullopt;
}

void ReplyCoord(protocol::ReplyWriter& out, double v) {
  const std::string text = geo::CoordText(v);
  if (out.resp() == 3) return out.Raw("," + text + "\r\n");
  out.Bulk(text);
}

namespace {

// GEOADD key [NX|XX] [CH] lon lat member [lon lat member ...]: ZADD with geohash scores.
void GeoAdd(CommandContext& ctx, Args args) {
  Store::Transaction::ZAddFlags flags;
  size_t at = 2;
  for (; at < args.size(); ++at) {
    if (EqualsIgnoreCase(args[at], "nx")) {
      flags.nx = true;
    } else if (EqualsIgnoreCase(args[at], "xx")) {
      flags.xx = true;
    } else if (EqualsIgnoreCase(args[at], "ch")) {
      flags.ch = true;
    } else {
      break;
    }
  }
  const size_t left = args.size() - at;
  if (left % 3 != 0 || (flags.xx && flags.nx) || left == 0) {
    return ReplyError(ctx.out, SyntaxError());
  }
  std::vector<std::pair<double, std::string_view>> pairs;
  for (size_t i = at; i < args.size(); i += 3) {
    geo::Point p;
    if (Status s = ParseLonLat(args[i], args[i + 1], &p); !s.ok()) return ReplyError(ctx.out, s);
    pairs.emplace_back(geo::ScoreOf(p.lon, p.lat), args[i + 2]);
  }
  if (!NotifyEnabled(kNotifyZset | kNotifyNew)) {
    Result<Store::Transaction::ZAddReply> r = ctx.txn().ZAdd(ctx.client.db, args[1], flags, pairs);
    if (!r.ok()) return ReplyError(ctx.out, r.status());
    return ctx.out.Integer(r->count);
  }
  // GEOADD is ZADD to Redis: "zadd" when a member was added or moved ("new" first when the key
  // was created). Run with CH; the reply counts added members by the cardinality unless CH.
  Store::Transaction::ZAddFlags changed = flags;
  changed.ch = true;
  Result<int64_t> before = ctx.txn().ZCard(ctx.client.db, args[1]);
  if (!before.ok()) return ReplyError(ctx.out, before.status());
  Result<Store::Transaction::ZAddReply> r = ctx.txn().ZAdd(ctx.client.db, args[1], changed, pairs);
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  Result<int64_t> after = ctx.txn().ZCard(ctx.client.db, args[1]);
  if (!after.ok()) return ReplyError(ctx.out, after.status());
  if (r->count > 0) {
    if (*before == 0 && *after > 0) NotifyKeyspaceEvent(kNotifyNew, "new", ctx.client.db, args[1]);
    NotifyKeyspaceEvent(kNotifyZset, "zadd", ctx.client.db, args[1]);
  }
  ctx.out.Integer(flags.ch ? r->count : *after - *before);
}

// The scores of the members (nullopt for a missing one); WRONGTYPE for a non-zset key.
Result<std::vector<std::optional<double>>> MemberScores(CommandContext& ctx, std::string_view key,
                                                        Args members) {
  return ctx.txn().ZMScore(ctx.client.db, key, members);
}

void GeoPos(CommandContext& ctx, Args args) {
  auto r = MemberScores(ctx, args[1], args.subspan(2));
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  ctx.out.Array(r->size());
  for (const auto& score : *r) {
    if (!score) {
      ctx.out.NullArray();
      continue;
    }
    const geo::Point p = *geo::Decode(*score);
    ctx.out.Array(2);
    ReplyCoord(ctx.out, p.lon);
    ReplyCoord(ctx.out, p.lat);
  }
}

void GeoHash(CommandContext& ctx, Args args) {
  auto r = MemberScores(ctx, args[1], args.subspan(2));
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  ctx.out.Array(r->size());
  for (const auto& score : *r) {
    if (score) {
      ctx.out.Bulk(geo::HashString(*score));
    } else {
      ctx.out.NullBulk();
    }
  }
}

// GEODIST key member1 member2 [unit]: the unit is checked before the key.
void GeoDist(CommandContext& ctx, Args args) {
  double to_meters = 1;
  if (args.size() == 5) {
    std::optional<double> unit = ParseGeoUnit(args[4]);
    if (!unit) return ReplyError(ctx.out, GeoBadUnit());
    to_meters = *unit;
  } else if (args.size() > 5) {
    return ReplyError(ctx.out, SyntaxError());
  }
  auto r = MemberScores(ctx, args[1], args.subspan(2, 2));
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  if (!(*r)[0] || !(*r)[1]) return ctx.out.NullBulk();
  const geo::Point a = *geo::Decode(*(*r)[0]);
  const geo::Point b = *geo::Decode(*(*r)[1]);
  ctx.out.Bulk(geo::DistanceText(geo::Distance(a.lon, a.lat, b.lon, b.lat) / to_meters));
}

}  // namespace

void RegisterGeoCommands(CommandTable& table) {
  table.Add(MakeSpec("geo", "geoadd", -5, kWrite | kDenyOom, {1, 1, 1}, GeoAdd,
                     "Add one or more geospatial items in the geospatial index represented "
                     "using a sorted set",
                     "3.2.0", "key [NX|XX] [CH] longitude latitude member [...]"));
  table.Add(MakeSpec("geo", "geopos", -2, kReadOnly, {1, 1, 1}, GeoPos,
                     "Returns longitude and latitude of members of a geospatial index", "3.2.0",
                     "key [member [member ...]]"));
  table.Add(MakeSpec("geo", "geohash", -2, kReadOnly, {1, 1, 1}, GeoHash,
                     "Returns members of a geospatial index as standard geohash strings", "3.2.0",
                     "key [member [member ...]]"));
  table.Add(MakeSpec("geo", "geodist", -4, kReadOnly, {1, 1, 1}, GeoDist,
                     "Returns the distance between two members of a geospatial index", "3.2.0",
                     "key member1 member2 [M|KM|FT|MI]"));
  RegisterGeoSearchCommands(table);
}

}  // namespace sluice::server
