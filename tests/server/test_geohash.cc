// The pure geo math (server/commands/geohash.h) against values redis-server 7.0.15 gives for the
// same points (ZSCORE after GEOADD, GEOHASH, GEOPOS, GEODIST).
#include <doctest/doctest.h>

#include <cstdint>

#include "server/commands/geohash.h"

namespace sluice::server::geo {

TEST_CASE("geohash scores are Redis's 52-bit interleaved cells") {
  CHECK(static_cast<uint64_t>(ScoreOf(13.361389, 38.115556)) == 3479099956230698ULL);
  CHECK(static_cast<uint64_t>(ScoreOf(15.087269, 37.502669)) == 3479447370796909ULL);
  CHECK(static_cast<uint64_t>(ScoreOf(-180, -85.05112878)) == 0ULL);
  CHECK(ValidLonLat(180, 85.05112878));
  CHECK_FALSE(ValidLonLat(180.0001, 0));
  CHECK_FALSE(ValidLonLat(0, -85.06));
}

TEST_CASE("decoding a score gives the cell centre as GEOPOS prints it") {
  const Point p = *Decode(3479099956230698.0);
  CHECK(CoordText(p.lon) == "13.36138933897018433");
  CHECK(CoordText(p.lat) == "38.11555639549629859");
  CHECK(CoordText(0.0) == "0");
  CHECK(CoordText(-0.0) == "0");
  CHECK(CoordText(2.5) == "2.5");
}

TEST_CASE("GEOHASH strings use the standard +-90 latitude range") {
  CHECK(HashString(3479099956230698.0) == "sqc8b49rny0");
  CHECK(HashString(3479447370796909.0) == "sqdtr74hyu0");
}

TEST_CASE("distances use Redis's haversine and print with 4 decimals") {
  const Point a = *Decode(3479099956230698.0);
  const Point b = *Decode(3479447370796909.0);
  CHECK(DistanceText(Distance(a.lon, a.lat, b.lon, b.lat)) == "166274.1516");
  CHECK(DistanceText(Distance(a.lon, a.lat, b.lon, b.lat) / 1000) == "166.2742");
  CHECK(DistanceText(0) == "0.0000");
  CHECK(DistanceText(0.00004) == "0.0000");
  CHECK(DistanceText(0.00006) == "0.0001");  // llrint: 0.5 rounds to even
}

TEST_CASE("search cells: the centre first, neighbours that the bounds reach, no repeats") {
  Shape s;
  s.centre = Point{15, 37};
  s.radius = 200;
  s.to_meters = 1000;
  const auto cells = SearchCells(s);
  CHECK_FALSE(cells[0].empty());
  CHECK(cells[0].step < kStepMax);
  double min = 0;
  double max = 0;
  ScoreRange(cells[0], &min, &max);
  CHECK(min <= ScoreOf(15, 37));
  CHECK(ScoreOf(15, 37) < max);
  double d = 0;
  CHECK(Within(s, *Decode(ScoreOf(15.087269, 37.502669)), &d));
  CHECK(d > 50000);
  s.radius = 10;
  CHECK_FALSE(Within(s, *Decode(ScoreOf(15.087269, 37.502669)), &d));
}

}  // namespace sluice::server::geo
