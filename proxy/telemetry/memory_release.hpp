// Hands free heap memory back to the system. The binary allocates through
// tcmalloc, which keeps freed pages for reuse: after a burst of big bodies
// the process would stay at its peak. Looked up at run time, so the same code
// works under tcmalloc (MallocExtension_ReleaseToSystem, in steps), glibc
// (malloc_trim) and the sanitizers' allocators (nothing to do).
#pragma once

namespace td::proxy {

enum class ReleasedBy { tcmalloc, glibc, nothing };

ReleasedBy release_free_memory();

}  // namespace td::proxy
