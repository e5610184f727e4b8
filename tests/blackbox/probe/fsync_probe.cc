// An LD_PRELOAD shim for black-box durability tests: every fsync(2)/fdatasync(2) of the process
// first sleeps the number of ms written in the file SLUICE_FSYNC_DELAY_FILE (none, or no file:
// no delay; read at every call, so a test slows fsync only once the server has started) and
// then runs the real call, and each call is
// logged to SLUICE_FSYNC_LOG (if set) as one line "<start_ns> <end_ns>\n" of CLOCK_MONOTONIC
// (the clock Python's time.monotonic_ns() reads). A slow fsync makes the window in which a
// write is applied but not yet durable wide enough for a test to look into it.
#include <dlfcn.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace {

int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

void Delay() {
  const char* path = std::getenv("SLUICE_FSYNC_DELAY_FILE");
  if (path == nullptr) return;
  FILE* f = std::fopen(path, "re");
  if (f == nullptr) return;
  long ms = 0;
  if (std::fscanf(f, "%ld", &ms) != 1) ms = 0;
  std::fclose(f);
  if (ms > 0) usleep(static_cast<useconds_t>(ms) * 1000);
}

void Log(int64_t start, int64_t end) {
  const char* path = std::getenv("SLUICE_FSYNC_LOG");
  if (path == nullptr) return;
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  char line[64];
  int n = std::snprintf(line, sizeof line, "%lld %lld\n", static_cast<long long>(start),
                        static_cast<long long>(end));
  if (n > 0) (void)!write(fd, line, static_cast<size_t>(n));  // one write: lines never interleave
  close(fd);
}

template <typename Fn>
int Probed(const char* name, int fd) {
  static Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
  const int64_t start = MonotonicNs();
  Delay();
  const int rc = real(fd);
  Log(start, MonotonicNs());
  return rc;
}

}  // namespace

extern "C" int fsync(int fd) { return Probed<int (*)(int)>("fsync", fd); }
extern "C" int fdatasync(int fd) { return Probed<int (*)(int)>("fdatasync", fd); }
