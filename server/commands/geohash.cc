#include "server/commands/geohash.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>

namespace sluice::server::geo {

namespace {

constexpr double kEarthRadiusM = 6372797.560856;
constexpr double kMercatorMax = 20037726.37;
constexpr double kDegToRad = M_PI / 180.0;

double DegRad(double a) { return a * kDegToRad; }
double RadDeg(double a) { return a / kDegToRad; }

// Spreads the low 32 bits of v to the even bit positions.
uint64_t Spread(uint64_t v) {
  v = (v | (v << 16)) & 0x0000FFFF0000FFFFULL;
  v = (v | (v << 8)) & 0x00FF00FF00FF00FFULL;
  v = (v | (v << 4)) & 0x0F0F0F0F0F0F0F0FULL;
  v = (v | (v << 2)) & 0x3333333333333333ULL;
  v = (v | (v << 1)) & 0x5555555555555555ULL;
  return v;
}

// The even bits of v, packed into the low 32 bits.
uint64_t Squash(uint64_t v) {
  v &= 0x5555555555555555ULL;
  v = (v | (v >> 1)) & 0x3333333333333333ULL;
  v = (v | (v >> 2)) & 0x0F0F0F0F0F0F0F0FULL;
  v = (v | (v >> 4)) & 0x00FF00FF00FF00FFULL;
  v = (v | (v >> 8)) & 0x0000FFFF0000FFFFULL;
  v = (v | (v >> 16)) & 0x00000000FFFFFFFFULL;
  return v;
}

struct Range {
  double min;
  double max;
};
constexpr Range kLon{kLonMin, kLonMax};
constexpr Range kLat{kLatMin, kLatMax};

// Latitude in the even bits, longitude in the odd ones (Redis's layout).
Cell EncodeIn(Range lon_r, Range lat_r, double lon, double lat, int step) {
  const double lat_off = (lat - lat_r.min) / (lat_r.max - lat_r.min) * double(1ULL << step);
  const double lon_off = (lon - lon_r.min) / (lon_r.max - lon_r.min) * double(1ULL << step);
  const auto lat_i = static_cast<uint32_t>(lat_off);
  const auto lon_i = static_cast<uint32_t>(lon_off);
  return Cell{Spread(lat_i) | (Spread(lon_i) << 1), step};
}

struct Area {
  Range lon;
  Range lat;
};

Area DecodeArea(const Cell& c) {
  const double lat_i = static_cast<double>(Squash(c.bits));
  const double lon_i = static_cast<double>(Squash(c.bits >> 1));
  const double cells = static_cast<double>(1ULL << c.step);
  const double lat_scale = kLat.max - kLat.min;
  const double lon_scale = kLon.max - kLon.min;
  Area a;
  a.lat.min = kLat.min + (lat_i * 1.0 / cells) * lat_scale;
  a.lat.max = kLat.min + ((lat_i + 1) * 1.0 / cells) * lat_scale;
  a.lon.min = kLon.min + (lon_i * 1.0 / cells) * lon_scale;
  a.lon.max = kLon.min + ((lon_i + 1) * 1.0 / cells) * lon_scale;
  return a;
}

// Moves a cell by one along longitude (odd bits, dx) and latitude (even bits, dy), wrapping.
void MoveBits(Cell* c, uint64_t mask_moved, uint64_t mask_kept, int d) {
  if (d == 0) return;
  uint64_t moved = c->bits & mask_moved;
  const uint64_t kept = c->bits & mask_kept;
  const uint64_t zz = mask_kept >> (64 - c->step * 2);
  if (d > 0) {
    moved = moved + (zz + 1);
  } else {
    moved = moved | zz;
    moved = moved - (zz + 1);
  }
  moved &= (mask_moved >> (64 - c->step * 2));
  c->bits = moved | kept;
}

Cell Neighbour(Cell c, int dx, int dy) {
  MoveBits(&c, 0xaaaaaaaaaaaaaaaaULL, 0x5555555555555555ULL, dx);
  MoveBits(&c, 0x5555555555555555ULL, 0xaaaaaaaaaaaaaaaaULL, dy);
  return c;
}

int EstimateSteps(double range_m, double lat) {
  if (range_m == 0) return 26;
  int step = 1;
  while (range_m < kMercatorMax) {
    range_m *= 2;
    step++;
  }
  step -= 2;
  if (lat > 66 || lat < -66) {
    step--;
    if (lat > 80 || lat < -80) step--;
  }
  if (step < 1) step = 1;
  if (step > 26) step = 26;
  return step;
}

// Bounds {min_lon, min_lat, max_lon, max_lat} of the shape, as Redis computes them.
std::array<double, 4> BoundingBox(const Shape& s) {
  const double height = s.to_meters * (s.box ? s.height / 2 : s.radius);
  const double width = s.to_meters * (s.box ? s.width / 2 : s.radius);
  const double lat = s.centre.lat;
  const double lat_delta = RadDeg(height / kEarthRadiusM);
  const double top = RadDeg(width / kEarthRadiusM / std::cos(DegRad(lat + lat_delta)));
  const double bottom = RadDeg(width / kEarthRadiusM / std::cos(DegRad(lat - lat_delta)));
  const double lon_delta = lat < 0 ? bottom : top;
  return {s.centre.lon - lon_delta, lat - lat_delta, s.centre.lon + lon_delta, lat + lat_delta};
}

double LatDistance(double lat1, double lat2) {
  return kEarthRadiusM * std::fabs(DegRad(lat2) - DegRad(lat1));
}

}  // namespace

bool ValidLonLat(double lon, double lat) {
  return !(lon < kLonMin || lon > kLonMax || lat < kLatMin || lat > kLatMax);
}

Cell Encode(double lon, double lat, int step) { return EncodeIn(kLon, kLat, lon, lat, step); }

uint64_t Align52(const Cell& cell) { return cell.bits << (52 - cell.step * 2); }

double ScoreOf(double lon, double lat) {
  return static_cast<double>(Align52(Encode(lon, lat, kStepMax)));
}

std::optional<Point> Decode(double score) {
  const Cell c{static_cast<uint64_t>(score), kStepMax};
  const Area a = DecodeArea(c);
  Point p;
  p.lon = std::clamp((a.lon.min + a.lon.max) / 2, kLonMin, kLonMax);
  p.lat = std::clamp((a.lat.min + a.lat.max) / 2, kLatMin, kLatMax);
  return p;
}

std::string HashString(double score) {
  static constexpr char kAlphabet[] = "0123456789bcdefghjkmnpqrstuvwxyz";
  const std::optional<Point> p = Decode(score);
  const Cell c = EncodeIn(Range{-180, 180}, Range{-90, 90}, p->lon, p->lat, kStepMax);
  std::string out(11, '0');
  for (int i = 0; i < 10; ++i) out[i] = kAlphabet[(c.bits >> (52 - (i + 1) * 5)) & 0x1f];
  return out;  // Redis's 11th character is always '0': the score has 52 bits, not 55
}

double Distance(double lon1, double lat1, double lon2, double lat2) {
  const double lon1r = DegRad(lon1);
  const double lon2r = DegRad(lon2);
  const double v = std::sin((lon2r - lon1r) / 2);
  if (v == 0.0) return LatDistance(lat1, lat2);
  const double lat1r = DegRad(lat1);
  const double lat2r = DegRad(lat2);
  const double u = std::sin((lat2r - lat1r) / 2);
  const double a = u * u + std::cos(lat1r) * std::cos(lat2r) * v * v;
  return 2.0 * kEarthRadiusM * std::asin(std::sqrt(a));
}

std::array<Cell, 9> SearchCells(const Shape& shape) {
  const auto [min_lon, min_lat, max_lon, max_lat] = BoundingBox(shape);
  const double w = shape.width / 2;
  const double h = shape.height / 2;
  const double radius_m = (shape.box ? std::sqrt(w * w + h * h) : shape.radius) * shape.to_meters;
  int steps = EstimateSteps(radius_m, shape.centre.lat);
  Cell centre = Encode(shape.centre.lon, shape.centre.lat, steps);
  // Order: centre, N, S, E, W, NE, NW, SE, SW.
  static constexpr int kDx[9] = {0, 0, 0, 1, -1, 1, -1, 1, -1};
  static constexpr int kDy[9] = {0, 1, -1, 0, 0, 1, 1, -1, -1};
  auto around = [&](const Cell& c) {
    std::array<Cell, 9> cells;
    for (int i = 0; i < 9; ++i) cells[i] = Neighbour(c, kDx[i], kDy[i]);
    return cells;
  };
  std::array<Cell, 9> cells = around(centre);
  // The cells may be too small for the shape's bounds: one step coarser then.
  const bool too_small =
      DecodeArea(cells[1]).lat.max < max_lat || DecodeArea(cells[2]).lat.min > min_lat ||
      DecodeArea(cells[3]).lon.max < max_lon || DecodeArea(cells[4]).lon.min > min_lon;
  if (steps > 1 && too_small) {
    steps--;
    centre = Encode(shape.centre.lon, shape.centre.lat, steps);
    cells = around(centre);
  }
  if (steps >= 2) {  // drop the neighbours the bounds do not reach
    const Area area = DecodeArea(centre);
    auto drop = [&](std::initializer_list<int> which) {
      for (int i : which) cells[i] = Cell{};
    };
    if (area.lat.min < min_lat) drop({2, 8, 7});
    if (area.lat.max > max_lat) drop({1, 5, 6});
    if (area.lon.min < min_lon) drop({4, 8, 6});
    if (area.lon.max > max_lon) drop({3, 7, 5});
  }
  // A neighbour equal to the last one scanned (huge radii) is scanned once.
  int last = -1;
  for (int i = 0; i < 9; ++i) {
    if (cells[i].empty()) continue;
    if (last > 0 && cells[i].bits == cells[last].bits && cells[i].step == cells[last].step) {
      cells[i] = Cell{};
      continue;
    }
    last = i;
  }
  return cells;
}

void ScoreRange(const Cell& cell, double* min, double* max) {
  *min = static_cast<double>(Align52(cell));
  *max = static_cast<double>(Align52(Cell{cell.bits + 1, cell.step}));
}

bool Within(const Shape& s, const Point& p, double* distance_m) {
  if (!s.box) {
    *distance_m = Distance(s.centre.lon, s.centre.lat, p.lon, p.lat);
    return *distance_m <= s.radius * s.to_meters;
  }
  if (LatDistance(p.lat, s.centre.lat) > s.height * s.to_meters / 2) return false;
  if (Distance(p.lon, p.lat, s.centre.lon, p.lat) > s.width * s.to_meters / 2) return false;
  *distance_m = Distance(s.centre.lon, s.centre.lat, p.lon, p.lat);
  return true;
}

std::string DistanceText(double d) {
  const long long scaled = std::llrint(d * 10000.0);
  const bool negative = scaled < 0;
  const unsigned long long v = negative ? 0ULL - static_cast<unsigned long long>(scaled)
                                        : static_cast<unsigned long long>(scaled);
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%s%llu.%04llu", negative ? "-" : "", v / 10000, v % 10000);
  return buf;
}

std::string CoordText(double v) {
  char buf[128];
  int n = std::snprintf(buf, sizeof(buf), "%.17Lf", static_cast<long double>(v));
  std::string s(buf, static_cast<size_t>(n));
  if (s.find('.') != std::string::npos) {
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

}  // namespace sluice::server::geo
