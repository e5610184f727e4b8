// RESP2/RESP3 reply writer: appends replies to a caller-owned output buffer. RESP3-only types
// (map, set, double, boolean, null) degrade to their RESP2 forms as Redis does: map -> flat array
// of 2N, set -> array, double -> bulk string, boolean -> integer 1/0, null -> $-1 or *-1.
// Not thread-safe: one per connection. No I/O; never allocates beyond growing the buffer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sluice::protocol {

class ReplyWriter {
 public:
  explicit ReplyWriter(std::string* out, int resp = 2) : out_(out), resp_(resp) {}
  void set_resp(int resp) { resp_ = resp; }  // 2 or 3
  int resp() const { return resp_; }
  std::string* buffer() { return out_; }

  void Simple(std::string_view s);  // +OK (CR/LF replaced with spaces, as in Error)
  // `message` starts with the error code: "ERR syntax error", "WRONGTYPE ...". CR/LF in it are
  // replaced with spaces so the reply stays one line.
  void Error(std::string_view message);
  void Integer(int64_t v);        // :42
  void Bulk(std::string_view s);  // $3\r\nfoo
  void NullBulk();                // $-1 (RESP3: _)
  void NullArray();               // *-1 (RESP3: _)
  void Array(size_t n);           // header; the caller writes n elements
  void Map(size_t pairs);         // RESP3 %n, RESP2 *2n
  void Set(size_t n);             // RESP3 ~n, RESP2 *n
  void Push(size_t n);            // RESP3 >n (out-of-band: pub/sub), RESP2 *n
  // RESP3 ,1.5  RESP2 bulk "1.5". Text as Redis 7.0's "%.17g" (0.1 -> 0.10000000000000001),
  // with inf, -inf and nan (any NaN) spelled out.
  void Double(double v);
  // As Double, but the shortest text that reads back as v (0.012, not 0.012000000000000000):
  // Redis's form for finite doubles such as ACL LOG's age-seconds.
  void ShortestDouble(double v);
  void Boolean(bool v);  // RESP3 #t/#f  RESP2 :1/:0
  // RESP3 =<len>\r\n<format>:<s> (format is 3 bytes: "txt" or "mkd"), RESP2 bulk of s (INFO).
  void Verbatim(std::string_view format, std::string_view s);
  void Raw(std::string_view bytes);  // already-encoded RESP (tests, pre-rendered replies)

 private:
  void DoubleText(std::string_view text);    // a double already formatted
  void Header(char type, int64_t n);         // <type><n>\r\n
  void Line(char type, std::string_view s);  // <type><s with CR/LF as spaces>\r\n

  std::string* out_;
  int resp_;
};

}  // namespace sluice::protocol
