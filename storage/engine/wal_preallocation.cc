#include "wal_preallocation.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace sluice::internal {
namespace {

using rocksdb::IODebugContext;
using rocksdb::IOOptions;
using rocksdb::IOStatus;
using rocksdb::Slice;

class WalPreallocatingFileSystem;

// A log file whose size runs ahead of its writes by up to a chunk, until a newer log retires it
// (RocksDB writes only to its newest log; an older one gets at most its buffer's last bytes,
// which then extend it as any file). Owns a descriptor of its own for fallocate and the cuts
// (RocksDB's file does not expose its own).
// Thread-safety: RocksDB serializes Append, Truncate and Close of a log; Retire comes from the
// thread creating the next log, so all of them take mu_. A Sync beside them touches nothing here.
class PreallocatingWalFile final : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  PreallocatingWalFile(std::unique_ptr<rocksdb::FSWritableFile> file, const std::string& path,
                       uint64_t chunk, WalPreallocatingFileSystem* fs);
  ~PreallocatingWalFile() override;

  IOStatus Append(const Slice& data, const IOOptions& options, IODebugContext* dbg) override {
    std::lock_guard<std::mutex> l(mu_);
    Reserve(data.size());
    IOStatus s = target()->Append(data, options, dbg);
    if (s.ok()) end_ += data.size();
    return s;
  }
  IOStatus Append(const Slice& data, const IOOptions& options,
                  const rocksdb::DataVerificationInfo& info, IODebugContext* dbg) override {
    std::lock_guard<std::mutex> l(mu_);
    Reserve(data.size());
    IOStatus s = target()->Append(data, options, info, dbg);
    if (s.ok()) end_ += data.size();
    return s;
  }
  IOStatus Truncate(uint64_t size, const IOOptions& options, IODebugContext* dbg) override {
    std::lock_guard<std::mutex> l(mu_);
    IOStatus s = target()->Truncate(size, options, dbg);
    if (s.ok()) end_ = size;
    return s;
  }
  // A closed log ends where its records end.
  IOStatus Close(const IOOptions& options, IODebugContext* dbg) override {
    std::lock_guard<std::mutex> l(mu_);
    IOStatus s = target()->Close(options, dbg);
    Cut(/*close=*/true);
    return s;
  }
  // A newer log exists: this one stops reserving and gives back what it reserved.
  void Retire() {
    std::lock_guard<std::mutex> l(mu_);
    Cut(/*close=*/false);
  }

 private:
  void Reserve(size_t n) {
    if (fd_ < 0 || !reserving_ || end_ + n <= reserved_) return;
    const uint64_t want = end_ + n + chunk_;
    // Mode 0: the file's size grows with the space, so the writes into it change no size.
    if (::fallocate(fd_, 0, static_cast<off_t>(reserved_), static_cast<off_t>(want - reserved_)) !=
        0) {
      reserving_ = false;  // a full disk or no fallocate: written as any file from here on
      return;
    }
    reserved_ = want;
  }
  void Cut(bool close) {
    reserving_ = false;
    if (fd_ < 0) return;
    if (reserved_ > end_) (void)!::ftruncate(fd_, static_cast<off_t>(end_));
    reserved_ = 0;
    if (close) {
      ::close(fd_);
      fd_ = -1;
    }
  }

  WalPreallocatingFileSystem* const fs_;
  const uint64_t chunk_;
  std::mutex mu_;
  int fd_;  // guarded by mu_ (as all below)
  bool reserving_ = true;
  uint64_t end_ = 0;       // bytes appended: the log's end
  uint64_t reserved_ = 0;  // the file's size as extended here (0: nothing reserved now)
};

class WalPreallocatingFileSystem final : public rocksdb::FileSystemWrapper {
 public:
  WalPreallocatingFileSystem(const std::shared_ptr<rocksdb::FileSystem>& base, uint64_t chunk)
      : FileSystemWrapper(base), chunk_(chunk) {}
  const char* Name() const override { return "SluiceWalPreallocatingFileSystem"; }

  // New files only: RocksDB starts every log empty (a reopened file appends at its end, which
  // reserved space would move, so ReopenWritableFile is left as it is). A new log retires the
  // ones before it.
  IOStatus NewWritableFile(const std::string& path, const rocksdb::FileOptions& options,
                           std::unique_ptr<rocksdb::FSWritableFile>* result,
                           IODebugContext* dbg) override {
    IOStatus s = target()->NewWritableFile(path, options, result, dbg);
    if (!s.ok() || !IsWalFileName(path) || options.use_direct_writes) return s;
    std::lock_guard<std::mutex> l(mu_);
    for (PreallocatingWalFile* older : live_) older->Retire();
    *result = std::make_unique<PreallocatingWalFile>(std::move(*result), path, chunk_, this);
    return s;
  }

  // Called with mu_ held by the caller of the file's constructor (NewWritableFile).
  void Add(PreallocatingWalFile* f) { live_.push_back(f); }
  void Remove(PreallocatingWalFile* f) {
    std::lock_guard<std::mutex> l(mu_);
    live_.erase(std::remove(live_.begin(), live_.end(), f), live_.end());
  }

 private:
  const uint64_t chunk_;
  std::mutex mu_;
  std::vector<PreallocatingWalFile*> live_;  // guarded by mu_: the wrapped logs not destroyed
};

PreallocatingWalFile::PreallocatingWalFile(std::unique_ptr<rocksdb::FSWritableFile> file,
                                           const std::string& path, uint64_t chunk,
                                           WalPreallocatingFileSystem* fs)
    : FSWritableFileOwnerWrapper(std::move(file)),
      fs_(fs),
      chunk_(chunk),
      fd_(::open(path.c_str(), O_WRONLY | O_CLOEXEC)) {
  fs_->Add(this);
}

PreallocatingWalFile::~PreallocatingWalFile() {
  fs_->Remove(this);
  Cut(/*close=*/true);
}

}  // namespace

bool IsWalFileName(std::string_view path) {
  const size_t slash = path.rfind('/');
  const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  constexpr std::string_view kSuffix = ".log";
  if (name.size() <= kSuffix.size() || !name.ends_with(kSuffix)) return false;
  for (char c : name.substr(0, name.size() - kSuffix.size())) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

std::shared_ptr<rocksdb::FileSystem> NewWalPreallocatingFileSystem(
    std::shared_ptr<rocksdb::FileSystem> base, uint64_t chunk_bytes) {
  return std::make_shared<WalPreallocatingFileSystem>(base, chunk_bytes);
}

}  // namespace sluice::internal
