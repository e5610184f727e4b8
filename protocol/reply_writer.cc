#include "protocol/reply_writer.h"

#include <charconv>
#include <cmath>

namespace sluice::protocol {
namespace {

constexpr std::string_view kCrlf = "\r\n";

// Longest header: one type byte, an int64 (20 chars with its sign) and CRLF.
constexpr size_t kHeaderMax = 1 + 20 + 2;

// Longest "%.17g" text: sign, 17 digits, point, "e-308".
constexpr size_t kDoubleMax = 32;

// Writes `v` as Redis 7.0 prints doubles: "%.17g", with inf/-inf/nan spelled out.
size_t FormatDouble(double v, char* buf) {
  std::string_view special;
  if (std::isnan(v)) {
    special = "nan";
  } else if (std::isinf(v)) {
    special = v > 0 ? "inf" : "-inf";
  }
  if (!special.empty()) {
    special.copy(buf, special.size());
    return special.size();
  }
  // chars_format::general with a precision is specified to match printf's %.17g.
  const auto result = std::to_chars(buf, buf + kDoubleMax, v, std::chars_format::general, 17);
  return static_cast<size_t>(result.ptr - buf);
}

}  // namespace

void ReplyWriter::Header(char type, int64_t n) {
  char buf[kHeaderMax];
  buf[0] = type;
  char* end = std::to_chars(buf + 1, buf + kHeaderMax - 2, n).ptr;
  *end++ = '\r';
  *end++ = '\n';
  out_->append(buf, static_cast<size_t>(end - buf));
}

void ReplyWriter::Line(char type, std::string_view s) {
  const size_t start = out_->size();
  out_->push_back(type);
  out_->append(s);
  for (size_t i = start + 1; i < out_->size(); ++i) {
    char& c = (*out_)[i];
    if (c == '\r' || c == '\n') c = ' ';
  }
  out_->append(kCrlf);
}

void ReplyWriter::Simple(std::string_view s) { Line('+', s); }

void ReplyWriter::Error(std::string_view message) { Line('-', message); }

void ReplyWriter::Integer(int64_t v) { Header(':', v); }

void ReplyWriter::Bulk(std::string_view s) {
  Header('$', static_cast<int64_t>(s.size()));
  out_->append(s);
  out_->append(kCrlf);
}

void ReplyWriter::NullBulk() { out_->append(resp_ >= 3 ? "_\r\n" : "$-1\r\n"); }

void ReplyWriter::NullArray() { out_->append(resp_ >= 3 ? "_\r\n" : "*-1\r\n"); }

void ReplyWriter::Array(size_t n) { Header('*', static_cast<int64_t>(n)); }

void ReplyWriter::Map(size_t pairs) {
  if (resp_ >= 3) {
    Header('%', static_cast<int64_t>(pairs));
  } else {
    Header('*', static_cast<int64_t>(pairs * 2));
  }
}

void ReplyWriter::Set(size_t n) { Header(resp_ >= 3 ? '~' : '*', static_cast<int64_t>(n)); }

void ReplyWriter::Push(size_t n) { Header(resp_ >= 3 ? '>' : '*', static_cast<int64_t>(n)); }

void ReplyWriter::Double(double v) {
  char buf[kDoubleMax];
  DoubleText(std::string_view(buf, FormatDouble(v, buf)));
}

void ReplyWriter::DoubleText(std::string_view text) {
  if (resp_ >= 3) {
    out_->push_back(',');
    out_->append(text);
    out_->append(kCrlf);
  } else {
    Bulk(text);
  }
}

void ReplyWriter::ShortestDouble(double v) {
  if (!std::isfinite(v)) return Double(v);
  char buf[64];
  const auto result = std::to_chars(buf, buf + sizeof buf, v);
  DoubleText(std::string_view(buf, static_cast<size_t>(result.ptr - buf)));
}

void ReplyWriter::Boolean(bool v) {
  if (resp_ >= 3) {
    out_->append(v ? "#t\r\n" : "#f\r\n");
  } else {
    out_->append(v ? ":1\r\n" : ":0\r\n");
  }
}

void ReplyWriter::Verbatim(std::string_view format, std::string_view s) {
  if (resp_ < 3) {
    Bulk(s);
    return;
  }
  Header('=', static_cast<int64_t>(format.size() + 1 + s.size()));
  out_->append(format);
  out_->push_back(':');
  out_->append(s);
  out_->append(kCrlf);
}

void ReplyWriter::Raw(std::string_view bytes) { out_->append(bytes); }

}  // namespace sluice::protocol
