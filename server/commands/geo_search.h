// What the geo command files share: argument parsers and the coordinate reply (cmd_geo.cc),
// and the registration of the searches (geo_search.cc).
#pragma once

#include <optional>
#include <string_view>

#include "protocol/reply_writer.h"
#include "server/commands/geohash.h"
#include "server/core/command.h"
#include "sluice/status.h"

namespace sluice::server {

// A longitude and latitude as Redis parses them: floats, then Redis's range check.
Status ParseLonLat(std::string_view lon, std::string_view lat, geo::Point* p);
// Meters per unit (m, km, ft, mi, any case); nullopt for another unit.
std::optional<double> ParseGeoUnit(std::string_view unit);
// A coordinate as Redis replies it: a bulk string in RESP2, a double in RESP3, 17 decimals
// without trailing zeros.
void ReplyCoord(protocol::ReplyWriter& out, double v);

// GEOSEARCH, GEOSEARCHSTORE, GEORADIUS, GEORADIUS_RO, GEORADIUSBYMEMBER, GEORADIUSBYMEMBER_RO.
void RegisterGeoSearchCommands(CommandTable& table);

}  // namespace sluice::server
