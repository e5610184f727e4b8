#include "server/commands/rdb_load.h"

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "server/commands/rdb_save.h"
#include "server/core/durable_file.h"
#include "server/core/logging.h"
#include "sluice/bulk_load.h"
#include "storage/formats/rdb_file.h"

namespace sluice::server {

namespace {

constexpr int kDatabases = 16;

Result<bool> StoreIsEmpty(Store& store) {
  for (int db = 0; db < kDatabases; ++db) {
    Result<int64_t> n = store.DbSize(db);
    if (!n.ok()) return n.status();
    if (*n > 0) return false;
  }
  return true;
}

Status ReadWholeFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError("cannot open " + path);
  out->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (in.bad()) return Status::IOError("cannot read " + path);
  return Status::Ok();
}

// Writes the visited keys through a BulkLoad (the store was empty and an RDB file holds each
// key once per database), logging progress about once a second.
class KeyWriter {
 public:
  KeyWriter(Store& store, int64_t total) : store_(store), load_(store), total_(total) {}

  Status Add(formats::RdbKey& key) {
    if (key.expire_at_ms != 0 && key.expire_at_ms <= store_.NowMs()) {
      ++expired_;
      return Status::Ok();
    }
    if (Status s = load_.Add(key.db, key.key, key.value, key.expire_at_ms); !s.ok()) return s;
    if ((load_.added() & 0xffff) == 0 &&
        std::chrono::steady_clock::now() - last_log_ > std::chrono::seconds(1)) {
      last_log_ = std::chrono::steady_clock::now();
      LogInfo("loading dump.rdb: " + std::to_string(load_.added() + expired_) + " of " +
              std::to_string(total_) + " keys");
    }
    return Status::Ok();
  }

  // Commits the last keys and fsyncs the log: every key durable.
  Status Finish() { return load_.Finish(); }

  int64_t written() const { return load_.added(); }
  int64_t expired() const { return expired_; }

 private:
  Store& store_;
  BulkLoad load_;
  int64_t total_;
  int64_t expired_ = 0;
  std::chrono::steady_clock::time_point last_log_ = std::chrono::steady_clock::now();
};

// While a file's keys are being written, a marker beside it names the load: a crash then leaves
// the marker, and the next start clears the half-loaded keys and loads the file again, where a
// data dir holding keys would otherwise make it skip the file for good.
std::string LoadingMarker(const std::string& path) { return path + ".sluice-loading"; }

// Clears what an interrupted load wrote (keys and function libraries), so the load starts over.
// Fails when the file is gone: the keys then are all there is of it, and only the user decides.
Status ResumeInterruptedLoad(Store& store, FunctionRegistry& functions, const std::string& path) {
  std::error_code ec;
  const std::string marker = LoadingMarker(path);
  if (!std::filesystem::exists(marker, ec)) return Status::Ok();
  if (!std::filesystem::exists(path, ec)) {
    return Status::InvalidArgument(
        "a load of " + path + " was interrupted (" + marker +
        " is there) and the file is gone: put it back to load it again, or delete " + marker +
        " to keep the keys loaded so far");
  }
  LogInfo("loading: the last load of " + path +
          " was interrupted; clearing the keys it wrote to load it again");
  if (Status s = store.FlushAll(); !s.ok()) return s;
  return functions.Flush();
}

Status LoadLibrary(FunctionRegistry& registry, std::string_view code) {
  std::string name;
  Status s = registry.Load(code, /*replace=*/false, &name);
  if (s.ok()) return s;
  return Status::InvalidArgument("function library in the file refused: " + s.message());
}

}  // namespace

Status LoadRdbFileIfFresh(Store& store, FunctionRegistry& functions, const std::string& path) {
  if (Status s = ResumeInterruptedLoad(store, functions, path); !s.ok()) return s;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return Status::Ok();
  Result<bool> empty = StoreIsEmpty(store);
  if (!empty.ok()) return empty.status();
  if (!*empty || functions.library_count() > 0) {
    LogInfo("loading: " + path + " ignored: the data dir already holds keys or functions");
    return Status::Ok();
  }
  const auto start = std::chrono::steady_clock::now();
  std::string file;
  if (Status s = ReadWholeFile(path, &file); !s.ok()) return s;
  LogInfo("loading " + path + " (" + std::to_string(file.size()) + " bytes): checking it");
  int64_t total = 0;
  FunctionRegistry scratch;  // in memory only: compiles the libraries, writes nothing
  formats::RdbVisitor check;
  check.key = [&](formats::RdbKey&) {
    ++total;
    return Status::Ok();
  };
  check.function = [&](std::string_view code) { return LoadLibrary(scratch, code); };
  // A file this data dir's own SAVE wrote (rdb_save.h) is its backup: loading it into the
  // emptied dir (after FLUSHALL, say) would bring deleted keys back.
  std::error_code canon_ec;
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  const std::filesystem::path here = std::filesystem::weakly_canonical(dir, canon_ec);
  const std::string here_name = canon_ec ? dir.string() : here.string();
  bool own_save = false;
  check.aux = [&](std::string_view name, std::string_view value) {
    if (name == kSavedFromAux && value == here_name) own_save = true;
    return Status::Ok();
  };
  Status checked = formats::ReadRdbFile(file, check);
  if (!checked.ok()) return Status::InvalidArgument(path + ": " + checked.message());
  if (own_save) {
    LogInfo("loading: " + path + " ignored: this data dir's own SAVE wrote it");
    return Status::Ok();
  }
  const std::string marker = LoadingMarker(path);
  if (int err = WriteFileDurably(marker, path + "\n"); err != 0) {
    return Status::IOError("cannot write " + marker + ": " + std::strerror(err));
  }
  KeyWriter writer(store, total);
  formats::RdbVisitor load;
  load.key = [&](formats::RdbKey& key) { return writer.Add(key); };
  load.function = [&](std::string_view code) { return LoadLibrary(functions, code); };
  Status s = formats::ReadRdbFile(file, load);
  if (s.ok()) s = writer.Finish();  // every key durable before the marker goes
  if (!s.ok()) return s;
  if (int err = RemoveFileDurably(marker); err != 0) {
    return Status::IOError("cannot remove " + marker + ": " + std::strerror(err));
  }
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  LogInfo("loaded " + path + ": " + std::to_string(functions.library_count()) +
          " function libraries, " + std::to_string(writer.written()) + " keys (" +
          std::to_string(writer.expired()) + " already expired, skipped) in " + std::to_string(ms) +
          " ms");
  return Status::Ok();
}

}  // namespace sluice::server
