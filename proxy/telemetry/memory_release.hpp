// Hands free heap memory back to the system. The binary allocates through
// tcmalloc, which keeps freed pages for reuse: after a burst of big bodies
// the process would stay at its peak. Looked up at run time, so the same code
// works under tcmalloc (MallocExtension_ReleaseToSystem, in steps) and glibc
// (malloc_trim).
#pragma once

namespace td::proxy {

void release_free_memory();

}  // namespace td::proxy
