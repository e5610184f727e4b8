// MigrateLink: MIGRATE's blocking connection to another Redis-protocol server. Every step
// (connect, write, read a reply line) is bounded by the command's timeout, as Redis bounds its
// own; the calling I/O thread waits meanwhile (Redis's whole server does).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sluice::server {

class MigrateLink {
 public:
  MigrateLink() = default;
  ~MigrateLink();
  MigrateLink(MigrateLink&& other) noexcept;
  MigrateLink& operator=(MigrateLink&& other) noexcept;
  MigrateLink(const MigrateLink&) = delete;
  MigrateLink& operator=(const MigrateLink&) = delete;

  bool connected() const { return fd_ >= 0; }
  // The last failed step ran out of time (rather than failing at once): Redis's MIGRATE does
  // not retry on a fresh connection then.
  bool timed_out() const { return timed_out_; }
  void Close();

  // False when no connection was made within timeout_ms.
  bool Connect(const std::string& host, const std::string& port, int timeout_ms);
  // False on an error or a timeout.
  bool WriteAll(std::string_view bytes, int timeout_ms);
  // One reply line without its CRLF (MIGRATE only reads status and error replies).
  bool ReadLine(std::string* line, int timeout_ms);

 private:
  int fd_ = -1;
  bool timed_out_ = false;
  std::string pending_;  // bytes read past the last line
};

// Appends one command as a RESP array of bulk strings.
void AppendCommand(const std::vector<std::string_view>& args, std::string* out);

}  // namespace sluice::server
