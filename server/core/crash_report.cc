#include "server/core/crash_report.h"

#include <execinfo.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <ctime>

#include "server/core/client_state.h"

namespace sluice::server {

namespace {

using crash_detail::t_args;
using crash_detail::t_client;

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
constexpr size_t kMaxArgs = 16;       // arguments shown
constexpr size_t kMaxArgBytes = 128;  // bytes shown of each

// Everything below runs inside the signal handler: write(2) only, no allocation, no locks.
void Write(std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(STDERR_FILENO, text.data(), text.size());
    if (n <= 0) return;
    text.remove_prefix(static_cast<size_t>(n));
  }
}

void WriteNumber(uint64_t value) {
  char digits[24];
  size_t i = sizeof digits;
  do {
    digits[--i] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0);
  Write(std::string_view(digits + i, sizeof digits - i));
}

// The log line prefix as logging.cc writes it, but with the time in Unix seconds (localtime_r
// is not async-signal-safe): "<pid>:M <seconds> # ".
void WritePrefix() {
  WriteNumber(static_cast<uint64_t>(getpid()));
  Write(":M ");
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  WriteNumber(static_cast<uint64_t>(ts.tv_sec));
  Write(" # ");
}

const char* SignalName(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGILL:
      return "SIGILL";
    case SIGABRT:
      return "SIGABRT";
    default:
      return "?";
  }
}

// An argument quoted as Redis's report shows it: printable bytes as they are, others \xNN.
void WriteQuoted(std::string_view arg) {
  static constexpr char kHex[] = "0123456789abcdef";
  Write("'\"");
  const size_t shown = arg.size() < kMaxArgBytes ? arg.size() : kMaxArgBytes;
  for (size_t i = 0; i < shown; ++i) {
    const auto c = static_cast<unsigned char>(arg[i]);
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      Write(std::string_view(&arg[i], 1));
    } else {
      const char esc[4] = {'\\', 'x', kHex[c >> 4], kHex[c & 15]};
      Write(std::string_view(esc, 4));
    }
  }
  if (shown < arg.size()) Write("...");
  Write("\"'");
}

void WriteClientInfo() {
  Write("\n------ CURRENT CLIENT INFO ------\n");
  if (t_client == nullptr) {
    Write("(no command was running on the crashing thread)\n");
    return;
  }
  Write("id=");
  WriteNumber(t_client->id);
  Write(" addr=");
  Write(t_client->addr);
  Write(" db=");
  WriteNumber(static_cast<uint64_t>(t_client->db));
  if (!t_args.empty()) {
    Write(" cmd=");
    Write(t_args[0].substr(0, kMaxArgBytes));
  }
  Write("\nargc: '");
  WriteNumber(t_args.size());
  Write("'\n");
  for (size_t i = 0; i < t_args.size() && i < kMaxArgs; ++i) {
    Write("argv[");
    WriteNumber(i);
    Write("]: ");
    WriteQuoted(t_args[i]);
    Write("\n");
  }
}

void WriteAddress(const void* address) {
  char hex[16];
  auto value = reinterpret_cast<uintptr_t>(address);
  for (int i = 15; i >= 0; --i, value >>= 4) hex[i] = "0123456789abcdef"[value & 15];
  Write("0x");
  Write(std::string_view(hex, sizeof hex));
}

void OnCrash(int sig, siginfo_t* info, void*) {
  Write("\n\n=== SLUICE BUG REPORT START: Cut & paste starting from here ===\n");
  WritePrefix();
  Write("Sluice " SLUICE_VERSION " crashed by signal: ");
  WriteNumber(static_cast<uint64_t>(sig));
  Write(" (");
  Write(SignalName(sig));
  Write(")\n");
  WritePrefix();
  Write("Accessing address: ");
  WriteAddress(info != nullptr ? info->si_addr : nullptr);
  Write("\n\n------ STACK TRACE ------\n");
  void* frames[64];
  backtrace_symbols_fd(frames, backtrace(frames, 64), STDERR_FILENO);
  WriteClientInfo();
  Write("\n=== SLUICE BUG REPORT END. Make sure to include from START to END. ===\n");
  // SA_RESETHAND restored the default action: dying of the same signal gives the exit status.
  raise(sig);
}

}  // namespace

void InstallCrashHandler() {
  static std::atomic<bool> installed{false};
  if (installed.exchange(true)) return;
  // backtrace() loads libgcc on its first call, which allocates: do it now, not in the handler.
  void* warmup[1];
  backtrace(warmup, 1);
  InstallCrashAltStackForThisThread();
  struct sigaction sa {};
  sa.sa_sigaction = OnCrash;
  sa.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_NODEFER | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  for (int sig : kSignals) sigaction(sig, &sa, nullptr);
}

void InstallCrashAltStackForThisThread() {
  thread_local char alt_stack[1 << 16];
  stack_t ss{};
  ss.ss_sp = alt_stack;
  ss.ss_size = sizeof alt_stack;
  sigaltstack(&ss, nullptr);
}

}  // namespace sluice::server
