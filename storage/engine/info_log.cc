#include "info_log.h"

#include <fcntl.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <ctime>

namespace sluice::internal {

namespace {

class FileInfoLog final : public rocksdb::Logger {
 public:
  explicit FileInfoLog(int fd) : rocksdb::Logger(rocksdb::InfoLogLevel::INFO_LEVEL), fd_(fd) {}
  ~FileInfoLog() override {
    if (fd_ >= 0) ::close(fd_);
  }

  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override {
    if (fd_ < 0) return;
    char line[8192];
    timeval tv{};
    gettimeofday(&tv, nullptr);
    tm t{};
    localtime_r(&tv.tv_sec, &t);
    int n = std::snprintf(line, sizeof(line), "%04d/%02d/%02d-%02d:%02d:%02d.%06ld ",
                          t.tm_year + 1900, t.tm_mon + 1, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec,
                          static_cast<long>(tv.tv_usec));
    va_list copy;
    va_copy(copy, ap);
    int m = std::vsnprintf(line + n, sizeof(line) - n - 1, format, copy);
    va_end(copy);
    size_t len = m < 0 ? n : std::min<size_t>(n + m, sizeof(line) - 2);
    if (len == 0 || line[len - 1] != '\n') line[len++] = '\n';
    // One write(2) per line; a failure (disk full) just loses the line.
    [[maybe_unused]] ssize_t written = ::write(fd_, line, len);
  }

 private:
  int fd_;
};

}  // namespace

std::shared_ptr<rocksdb::Logger> OpenInfoLog(const std::string& dir) {
  const std::string path = dir + "/LOG";
  ::rename(path.c_str(), (path + ".old").c_str());  // fails harmlessly when there is no LOG
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  return std::make_shared<FileInfoLog>(fd);
}

}  // namespace sluice::internal
