#include "proxy/telemetry/memory_release.hpp"

#include <dlfcn.h>
#include <malloc.h>

namespace td::proxy {

ReleasedBy release_free_memory() {
  using Release = void (*)();
  // gperftools' C entry point, present only when tcmalloc is linked in.
  static const auto tcmalloc_release =
      reinterpret_cast<Release>(dlsym(RTLD_DEFAULT, "MallocExtension_ReleaseFreeMemory"));
  if (tcmalloc_release) {
    tcmalloc_release();
    return ReleasedBy::tcmalloc;
  }
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
  malloc_trim(0);
  return ReleasedBy::glibc;
#else
  return ReleasedBy::nothing;
#endif
}

}  // namespace td::proxy
