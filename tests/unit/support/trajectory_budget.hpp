// Which recorded trajectories the per-request tests walk. Those tests replay
// every request of a trajectory, so their time grows with the square of its
// length; under the sanitizers (several times slower) the largest ones
// would take most of CI's budget. A sanitizer build defines
// TD_TRAJECTORY_MAX_BYTES (tests/CMakeLists.txt) and skips the files over
// it; the release build walks them all with the same checks.
#pragma once

#include <cstdint>
#include <filesystem>

namespace td::fixtures {

inline bool trajectory_in_budget(const std::filesystem::path& file) {
#ifdef TD_TRAJECTORY_MAX_BYTES
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(file, ec);
  return ec || size <= std::uintmax_t{TD_TRAJECTORY_MAX_BYTES};
#else
  (void)file;
  return true;
#endif
}

}  // namespace td::fixtures
