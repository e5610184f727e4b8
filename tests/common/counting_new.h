// Counting global operator new/delete for allocation tests (malloc underneath). Include this
// header in exactly ONE .cc file of a test binary: it defines the replacement operators, which
// then apply to the whole binary.
//
// Each thread counts its own allocations, so background threads (RocksDB's, the Store's) never
// disturb a measurement. Tests only.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <new>

namespace sluice::testing {

// Called for each allocation a thread makes while an AllocationCounter is active on it, except
// allocations made inside the hook itself (e.g. backtrace()). nullptr: none.
inline void (*g_allocation_hook)(size_t size) = nullptr;

namespace counting_new_internal {
inline thread_local long t_total = 0;  // allocations by this thread, ever
inline thread_local int t_active = 0;  // AllocationCounters alive on this thread
inline thread_local bool t_in_hook = false;

inline void Note(size_t size) {
  if (t_in_hook) return;
  ++t_total;
  if (t_active > 0 && g_allocation_hook != nullptr) {
    t_in_hook = true;
    g_allocation_hook(size);
    t_in_hook = false;
  }
}
}  // namespace counting_new_internal

// Counts the calling thread's allocations from construction until Stop() (or destruction).
class AllocationCounter {
 public:
  AllocationCounter() : start_(counting_new_internal::t_total) {
    ++counting_new_internal::t_active;
  }
  ~AllocationCounter() { Stop(); }
  AllocationCounter(const AllocationCounter&) = delete;
  AllocationCounter& operator=(const AllocationCounter&) = delete;
  // The allocations counted so far; the counter stops (calling it again returns the same value).
  long Stop() {
    if (active_) {
      active_ = false;
      --counting_new_internal::t_active;
      counted_ = counting_new_internal::t_total - start_;
    }
    return counted_;
  }

 private:
  long start_;
  long counted_ = 0;
  bool active_ = true;
};

}  // namespace sluice::testing

// The replacements (operator new[] calls these in libstdc++). GCC cannot
// tell that these operator new take their memory from malloc, so free() is the matching release.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(size_t size) {
  sluice::testing::counting_new_internal::Note(size);
  if (void* p = std::malloc(size ? size : 1)) return p;
  throw std::bad_alloc();
}
void* operator new(size_t size, std::align_val_t align) {
  sluice::testing::counting_new_internal::Note(size);
  const auto a = static_cast<size_t>(align);
  if (void* p = std::aligned_alloc(a, (size + a - 1) / a * a)) return p;
  throw std::bad_alloc();
}
// The nothrow forms too: a sanitizer runtime defines its own, whose memory then reached the free()
// below (std::stable_sort's temporary buffer: ASan's alloc-dealloc-mismatch).
void* operator new(size_t size, const std::nothrow_t&) noexcept {
  sluice::testing::counting_new_internal::Note(size);
  return std::malloc(size ? size : 1);
}
void* operator new(size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  sluice::testing::counting_new_internal::Note(size);
  const auto a = static_cast<size_t>(align);
  return std::aligned_alloc(a, (size + a - 1) / a * a);
}
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop
