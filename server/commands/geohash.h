// Redis's geo math, as pure functions: the 52-bit interleaved geohash that GEOADD stores as a
// sorted-set score (so the scores equal Redis's), its decoding to the cell's centre, the 9-cell
// search area GEOSEARCH scans (Redis's cells in Redis's order, so unsorted replies come in
// Redis's order), the haversine distance on Redis's earth radius, and Redis's reply texts for
// distances and coordinates. No storage, no I/O.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace sluice::server::geo {

inline constexpr double kLatMin = -85.05112878;
inline constexpr double kLatMax = 85.05112878;
inline constexpr double kLonMin = -180;
inline constexpr double kLonMax = 180;
inline constexpr int kStepMax = 26;  // 26 bits per coordinate: 52-bit scores

struct Cell {
  uint64_t bits = 0;
  int step = 0;  // bits per coordinate; 0 with bits 0: no cell
  bool empty() const { return bits == 0 && step == 0; }
};

struct Point {
  double lon = 0;
  double lat = 0;
};

// True when Redis accepts the pair (GEOADD, FROMLONLAT, GEORADIUS).
bool ValidLonLat(double lon, double lat);
// The cell of step `step` holding the point, over Redis's ranges (latitude +-85.05112878).
Cell Encode(double lon, double lat, int step);
// A cell's bits aligned to 52 bits: GEOADD's score for a step-26 cell.
uint64_t Align52(const Cell& cell);
// GEOADD's score for a point.
double ScoreOf(double lon, double lat);
// The centre of the step-26 cell a score names (GEOPOS, WITHCOORD); nullopt when it names none.
std::optional<Point> Decode(double score);
// GEOHASH's 11-character standard geohash (latitude +-90) of a stored score.
std::string HashString(double score);
// Distance in meters (haversine, Redis's earth radius 6372797.560856 m).
double Distance(double lon1, double lat1, double lon2, double lat2);

// What GEOSEARCH looks for: a circle (radius) or a box (width, height), each in the unit
// `to_meters` converts from, around `centre`.
struct Shape {
  Point centre;
  bool box = false;
  double radius = 0;
  double width = 0;
  double height = 0;
  double to_meters = 1;
};
// The cells to scan, in Redis's order (centre, N, S, E, W, NE, NW, SE, SW), empties and a cell
// equal to the one scanned before it left out.
std::array<Cell, 9> SearchCells(const Shape& shape);
// The score range [min, max) a cell covers.
void ScoreRange(const Cell& cell, double* min, double* max);
// Whether the point is inside the shape; its distance from the centre (meters) when it is.
bool Within(const Shape& shape, const Point& p, double* distance_m);

// "%.4f"-style distance text as Redis writes it (rounded to nearest, "0.0000" for zero).
std::string DistanceText(double d);
// Redis's "human" long double text: %.17Lf with trailing zeros (and a bare '.') removed.
std::string CoordText(double v);

}  // namespace sluice::server::geo
