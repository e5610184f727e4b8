// Lua's number texts for the native scripts (native_ops.h): "%.14g" and "%.17g" as printf
// prints them, and strtod's reading of plain decimals. Both have an exact integer fast path
// for the numbers limiter scripts pass (timestamps, counts, periods) and otherwise use the
// standard library's correctly rounded conversions: its general printing costs ~800
// instructions per number, and printing plus reading were 6% of a limits moving-window call.
#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <system_error>

#include "server/scripting/native/native_ops.h"

namespace sluice::server::native {

namespace {

using u128 = unsigned __int128;

// A double's exact value as N / 10^scale is computed for scales up to this: 5^32 * 2^53 <
// 2^128, so N fits 128 bits (any double in [2^21, 2^64), and shorter fractions below that).
constexpr int kMaxScale = 32;

// Powers of `base` from base^0 to base^(N-1), computed at compile time.
template <size_t N>
constexpr std::array<u128, N> Powers(unsigned base) {
  std::array<u128, N> t{};
  t[0] = 1;
  for (size_t i = 1; i < N; ++i) t[i] = t[i - 1] * base;
  return t;
}

constexpr auto kPow10 = Powers<39>(10);  // 10^38 < 2^128 < 10^39
constexpr auto kPow5 = Powers<kMaxScale + 1>(5);

// Decimal digits of n (at most 39: n < 2^128).
int DecimalDigits(u128 n) {
  const uint64_t high = static_cast<uint64_t>(n >> 64);
  const int bits = high != 0 ? 128 - std::countl_zero(high)
                             : 64 - std::countl_zero(static_cast<uint64_t>(n) | 1);
  // floor(bits * log10(2)) (1233/4096 approximates log10(2) closely enough below 2^128): n has
  // that many digits, or one more when it reaches the next power of ten.
  const int t = bits * 1233 >> 12;
  return n >= kPow10[t] ? t + 1 : t;
}

// |d| = n / 10^scale exactly, for a normal d whose exact decimal has at most kMaxScale digits
// after the point and that is below 2^64; false otherwise.
bool ExactDecimal(double d, u128* n, int* scale) {
  uint64_t bits = 0;
  std::memcpy(&bits, &d, sizeof bits);
  const int biased = static_cast<int>((bits >> 52) & 0x7ff);
  if (biased == 0 || biased == 0x7ff) return false;  // zero, subnormal, inf, nan
  uint64_t m = (bits & ((uint64_t{1} << 52) - 1)) | (uint64_t{1} << 52);
  int e = biased - 1075;  // |d| = m * 2^e
  if (e >= 0) {
    if (e > 11) return false;
    *n = static_cast<u128>(m) << e;
    *scale = 0;
    return true;
  }
  const int tz = std::min(std::countr_zero(m), -e);
  m >>= tz;
  e += tz;
  if (-e > kMaxScale) return false;
  *n = static_cast<u128>(m) * kPow5[-e];  // m * 2^e = m * 5^-e / 10^-e
  *scale = -e;
  return true;
}

// printf's "%.<precision>g" of d (precision <= 17) when ExactDecimal applies and the result
// has no exponent; false otherwise. printf rounds the exact value to `precision` significant
// digits, ties to even (the default rounding mode), then drops trailing fraction zeros.
bool PrintGExact(double d, int precision, NumberText* text) {
  u128 n = 0;
  int scale = 0;
  if (!ExactDecimal(d, &n, &scale)) return false;
  int digits = DecimalDigits(n);
  int exp10 = digits - 1 - scale;  // the first digit's power of ten
  if (digits > precision) {
    const u128 unit = kPow10[digits - precision];
    u128 q = n / unit;
    const u128 r = n - q * unit;
    const u128 half = unit / 2;
    if (r > half || (r == half && (q & 1) != 0)) ++q;
    if (q == kPow10[precision]) {  // rounded up to the next power of ten
      q /= 10;
      ++exp10;
    }
    n = q;
    digits = precision;
  }
  if (exp10 < -4 || exp10 >= precision) return false;  // printf's exponent form
  char d_buf[20];
  uint64_t v = static_cast<uint64_t>(n);  // below 10^precision now
  for (int i = digits - 1; i >= 0; --i) {
    d_buf[i] = static_cast<char>('0' + static_cast<int>(v % 10));
    v /= 10;
  }
  int used = digits;  // significant digits kept: trailing zeros after the point go
  while (used > exp10 + 1 && used > 1 && d_buf[used - 1] == '0') --used;
  char* out = text->data;
  if (std::signbit(d)) *out++ = '-';
  if (exp10 < 0) {
    *out++ = '0';
    *out++ = '.';
    for (int i = exp10 + 1; i < 0; ++i) *out++ = '0';
    std::memcpy(out, d_buf, static_cast<size_t>(used));
    out += used;
  } else {
    std::memcpy(out, d_buf, static_cast<size_t>(exp10 + 1));
    out += exp10 + 1;
    if (used > exp10 + 1) {
      *out++ = '.';
      std::memcpy(out, d_buf + exp10 + 1, static_cast<size_t>(used - exp10 - 1));
      out += used - exp10 - 1;
    }
  }
  text->size = static_cast<size_t>(out - text->data);
  return true;
}

// printf's "%.<precision>g": std::to_chars with a precision is specified to print exactly as
// printf does in the "C" locale (and does it without printf's multi-precision arithmetic).
NumberText PrintG(double d, int precision) {
  NumberText text;
  if (d == 0) {
    const std::string_view zero = std::signbit(d) ? "-0" : "0";
    std::memcpy(text.data, zero.data(), zero.size());
    text.size = zero.size();
    return text;
  }
  if (PrintGExact(d, precision, &text)) return text;
  const auto r = std::to_chars(text.data, text.data + sizeof text.data, d,
                               std::chars_format::general, precision);
  text.size = r.ec == std::errc() ? static_cast<size_t>(r.ptr - text.data) : 0;
  return text;
}

// Skips a run of digits from `i`; false when there is none.
bool Digits(std::string_view text, size_t* i) {
  const size_t from = *i;
  while (*i < text.size() && text[*i] >= '0' && text[*i] <= '9') ++*i;
  return *i > from;
}

// Clinger's fast path for [-]digits[.digits]: when the digits without the point make an integer
// of at most 2^53 and at most 22 of them follow the point, both that integer and the power of
// ten are exact doubles, so one division gives the correctly rounded value (strtod's).
std::optional<double> FastDecimal(std::string_view text) {
  constexpr double kPow10d[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                  1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                  1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  uint64_t mantissa = 0;
  int after_point = -1;  // digits after the point, once it is seen
  for (size_t i = text[0] == '-' ? 1 : 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '.') {
      after_point = 0;
      continue;
    }
    if (c < '0' || c > '9') return std::nullopt;  // an exponent
    if (mantissa > (uint64_t{1} << 53) / 10) return std::nullopt;
    mantissa = mantissa * 10 + static_cast<uint64_t>(c - '0');
    if (after_point >= 0) ++after_point;
  }
  if (mantissa > (uint64_t{1} << 53) || after_point > 22) return std::nullopt;
  const double v = static_cast<double>(mantissa) / kPow10d[after_point < 0 ? 0 : after_point];
  return text[0] == '-' ? -v : v;
}

}  // namespace

NumberText LuaNumberArg(double d) { return PrintG(d, 17); }

NumberText LuaToString(double d) { return PrintG(d, 14); }

std::optional<int64_t> LuaIntegerArg(double d) {
  if (!(std::fabs(d) < 1e17) || d != std::floor(d) || (d == 0 && std::signbit(d))) {
    return std::nullopt;
  }
  return static_cast<int64_t>(d);
}

std::optional<double> LuaDecimal(std::string_view text) {
  if (text.empty() || text.size() > 64) return std::nullopt;
  size_t i = text[0] == '-' ? 1 : 0;
  if (!Digits(text, &i)) return std::nullopt;
  if (i < text.size() && text[i] == '.') {
    ++i;
    if (!Digits(text, &i)) return std::nullopt;
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    if (!Digits(text, &i)) return std::nullopt;
  }
  if (i != text.size()) return std::nullopt;
  if (std::optional<double> fast = FastDecimal(text)) return fast;
  double d = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), d);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size() || !std::isfinite(d)) {
    return std::nullopt;
  }
  return d;
}

}  // namespace sluice::server::native
