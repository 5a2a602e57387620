// Paths a command reads, checked before it reads them: a path that does not
// exist (or is a directory where a file is read, or the other way round) is
// an error naming it, never an empty result (docs/design.md §Configuration,
// Command line).
#pragma once

#include <string>

namespace td::cli {

enum class PathKind { file, directory };

// "" when `path` exists and is a `kind` (a file: anything but a directory,
// so a pipe or /dev/stdin reads too); else why not, naming the path:
// "/x: No such file or directory" (strerror), "/x: is a directory", "/x: not a directory".
std::string path_problem(const std::string& path, PathKind kind);

}  // namespace td::cli
