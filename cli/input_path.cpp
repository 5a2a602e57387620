#include "cli/input_path.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "cli/terminal_text.hpp"

namespace td::cli {

std::string path_problem(const std::string& path, PathKind kind) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return terminal_text(path) + ": " + std::strerror(errno);
  }
  const bool directory = S_ISDIR(st.st_mode);
  if (kind == PathKind::file && directory) return terminal_text(path) + ": is a directory";
  if (kind == PathKind::directory && !directory) return terminal_text(path) + ": not a directory";
  return {};
}

}  // namespace td::cli
