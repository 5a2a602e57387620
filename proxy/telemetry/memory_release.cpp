#include "proxy/telemetry/memory_release.hpp"

#include <dlfcn.h>
#include <malloc.h>

#include <chrono>
#include <cstddef>
#include <thread>

namespace td::proxy {

namespace {

// gperftools' C entry points, present only when tcmalloc is linked in.
struct Tcmalloc {
  using ReleaseToSystem = void (*)(std::size_t);
  using GetNumericProperty = int (*)(const char*, std::size_t*);
  ReleaseToSystem release = nullptr;
  GetNumericProperty property = nullptr;
};

Tcmalloc find_tcmalloc() {
  Tcmalloc t;
  t.release = reinterpret_cast<Tcmalloc::ReleaseToSystem>(dlsym(RTLD_DEFAULT, "MallocExtension_ReleaseToSystem"));
  t.property =
      reinterpret_cast<Tcmalloc::GetNumericProperty>(dlsym(RTLD_DEFAULT, "MallocExtension_GetNumericProperty"));
  return t;
}

// tcmalloc holds its page heap lock while it returns pages, and every thread
// that needs a new span waits for that lock: a release of hundreds of
// megabytes at once would stall the I/O threads. So it goes in steps, with
// the lock free in between.
void release_in_steps(const Tcmalloc& t) {
  constexpr std::size_t kStep = std::size_t{16} << 20;
  constexpr int kMaxSteps = 4096;  // 64 GiB: whatever is left waits for the next release
  for (int i = 0; i < kMaxSteps; ++i) {
    std::size_t free_bytes = 0;
    if (!t.property("tcmalloc.pageheap_free_bytes", &free_bytes) || free_bytes == 0) return;
    t.release(kStep);
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

}  // namespace

void release_free_memory() {
  static const Tcmalloc tcmalloc = find_tcmalloc();
  if (tcmalloc.release && tcmalloc.property) {
    release_in_steps(tcmalloc);
    return;
  }
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace td::proxy
