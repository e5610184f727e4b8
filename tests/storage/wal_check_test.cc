// The write-ahead log check before Open (storage/engine/wal_check.h): a clean log, a flipped byte
// (the damaged record's offset), a log cut short; Store::Open refuses damage by default, names the
// file and offset and leaves the file as it was, and loads with WalRecovery::kPointInTime.
#include "storage/engine/wal_check.h"

#include <doctest/doctest.h>
#include <rocksdb/db.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "test_util.h"

namespace sluice::testing {
namespace {

// Writes `n` keys with RocksDB directly and closes without flushing the memtable, so they live
// only in the write-ahead log. Returns the log's path.
std::string WriteLogOnly(const std::string& dir, int n) {
  rocksdb::Options o;
  o.create_if_missing = true;
  o.avoid_flush_during_shutdown = true;
  rocksdb::DB* raw = nullptr;
  REQUIRE(rocksdb::DB::Open(o, dir, &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  for (int i = 0; i < n; ++i) {
    REQUIRE(db->Put(rocksdb::WriteOptions(), "k" + std::to_string(i), std::string(200, 'v')).ok());
  }
  REQUIRE(db->Close().ok());
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".log" && std::filesystem::file_size(e.path()) > 0) {
      return e.path().string();
    }
  }
  FAIL("no write-ahead log left");
  return {};
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void WriteAll(const std::string& path, const std::string& data) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
}

}  // namespace

TEST_CASE("wal check: clean, flipped byte, cut short") {
  TempDir dir;
  const std::string log = WriteLogOnly(dir.path(), 300);
  // An operator's log file beside the engine's is not a write-ahead log.
  WriteAll(dir.path() + "/stderr.log", "server started\n");
  CHECK(internal::WalFiles(dir.path()) == std::vector<std::string>{log});
  CHECK(internal::CheckWalFiles(dir.path()).empty());
  const std::string clean = ReadAll(log);
  REQUIRE(clean.size() > 40000);

  std::string damaged = clean;
  const size_t pos = clean.size() / 2;
  damaged[pos] = static_cast<char>(damaged[pos] ^ 0x40);
  WriteAll(log, damaged);
  auto findings = internal::CheckWalFiles(dir.path());
  REQUIRE(findings.size() == 1);
  CHECK(findings[0].file == log);
  CHECK(!findings[0].torn_tail);
  CHECK(findings[0].what == "checksum mismatch");
  CHECK(findings[0].offset <= pos);
  CHECK(findings[0].offset + 300 > pos);  // the record holding the flipped byte
  CHECK(findings[0].size == clean.size());

  // Open refuses, names the file and offset, and leaves the log as it was.
  Options options;
  options.path = dir.path();
  options.active_expiry = false;  // the keys are not in Sluice's encoding
  auto refused = Store::Open(options);
  REQUIRE(!refused.ok());
  CHECK(refused.status().code() == Code::kCorruption);
  CHECK(refused.status().message().find("damaged write-ahead log " + log + " at byte " +
                                        std::to_string(findings[0].offset) + " of " +
                                        std::to_string(clean.size()) +
                                        " (checksum mismatch): refusing to start") == 0);
  CHECK(ReadAll(log) == damaged);

  WriteAll(log, clean.substr(0, clean.size() - 5));
  findings = internal::CheckWalFiles(dir.path());
  REQUIRE(findings.size() == 1);
  CHECK(findings[0].torn_tail);
  CHECK(findings[0].what == "incomplete record at the end");

  options.wal_recovery = WalRecovery::kAbsolute;
  CHECK(!Store::Open(options).ok());
  options.wal_recovery = WalRecovery::kTolerateTail;
  std::vector<std::string> warnings;
  options.on_error = [&](const std::string& line) { warnings.push_back(line); };
  auto opened = Store::Open(options);
  REQUIRE(opened.ok());
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("the log was cut short") != std::string::npos);
}

TEST_CASE("wal check: point-in-time accepts the loss") {
  TempDir dir;
  const std::string log = WriteLogOnly(dir.path(), 300);
  std::string data = ReadAll(log);
  data[data.size() / 2] = static_cast<char>(data[data.size() / 2] ^ 0x40);
  WriteAll(log, data);
  Options options;
  options.path = dir.path();
  options.active_expiry = false;  // the keys are not in Sluice's encoding
  options.wal_recovery = WalRecovery::kPointInTime;
  auto opened = Store::Open(options);
  REQUIRE(opened.ok());
}

}  // namespace sluice::testing
