#include "server/core/listen_hook.h"

#include <mutex>

namespace sluice::server {

namespace {
std::mutex& HookMutex() {
  static std::mutex* mu = new std::mutex;
  return *mu;
}
ListenApplyFn& Hook() {
  static ListenApplyFn* fn = new ListenApplyFn;
  return *fn;
}
}  // namespace

void SetListenApply(ListenApplyFn fn) {
  std::lock_guard lock(HookMutex());
  Hook() = std::move(fn);
}

ListenApplyResult ApplyListen(int port, const std::vector<std::string>& bind) {
  std::lock_guard lock(HookMutex());
  return Hook() ? Hook()(port, bind) : ListenApplyResult::kOk;
}

}  // namespace sluice::server
