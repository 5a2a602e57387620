#include "archive/durable_file.hpp"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace td::archive {
namespace {

std::string failure(std::string_view what, const std::string& path) {
  return std::string(what) + " " + path + ": " + std::strerror(errno);
}

std::string parent_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// Writes all of `bytes` to `fd` (EINTR and short writes retried).
bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// Closes `fd` keeping the errno of the failure that came before.
void close_keeping_errno(int fd) {
  const int saved = errno;
  ::close(fd);
  errno = saved;
}

}  // namespace

std::string make_private_dir(const std::string& dir) {
  if (dir.empty()) return "make directory: empty path";
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) {
      errno = ENOTDIR;
      return failure("make directory", dir);
    }
    if ((st.st_mode & 0777) != 0700 && ::chmod(dir.c_str(), 0700) != 0) return failure("chmod", dir);
    return "";
  }
  const std::string parent = parent_of(dir);
  if (parent != dir && ::stat(parent.c_str(), &st) != 0) {
    if (std::string e = make_private_dir(parent); !e.empty()) return e;
  }
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return failure("make directory", dir);
  // The umask may have taken bits away; never added any: 0700 exactly.
  if (::chmod(dir.c_str(), 0700) != 0) return failure("chmod", dir);
  return sync_dir(parent);
}

std::string write_file_durably(const std::string& path, std::string_view bytes, bool sync_directory) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return failure("create", tmp);
  if (!write_all(fd, bytes)) {
    close_keeping_errno(fd);
    std::string e = failure("write", tmp);
    ::unlink(tmp.c_str());
    return e;
  }
  if (::fsync(fd) != 0) {
    close_keeping_errno(fd);
    std::string e = failure("fsync", tmp);
    ::unlink(tmp.c_str());
    return e;
  }
  if (::close(fd) != 0) {
    std::string e = failure("close", tmp);
    ::unlink(tmp.c_str());
    return e;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string e = failure("rename", tmp);
    ::unlink(tmp.c_str());
    return e;
  }
  return sync_directory ? sync_dir(parent_of(path)) : "";
}

std::string append_durably(const std::string& path, std::string_view line) {
  struct stat st {};
  const bool existed = ::stat(path.c_str(), &st) == 0;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return failure("open", path);
  if (!write_all(fd, line) || ::fsync(fd) != 0) {
    close_keeping_errno(fd);
    return failure("append to", path);
  }
  if (::close(fd) != 0) return failure("close", path);
  return existed ? "" : sync_dir(parent_of(path));
}

std::string sync_dir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return failure("open directory", dir);
  if (::fsync(fd) != 0) {
    close_keeping_errno(fd);
    return failure("fsync directory", dir);
  }
  ::close(fd);
  return "";
}

bool read_whole_file(const std::string& path, std::string& out) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return false;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return false;
  }
  out.clear();
  out.resize(static_cast<std::size_t>(st.st_size));
  std::size_t have = 0;
  for (;;) {
    if (have == out.size()) out.resize(out.size() + 4096);  // grew since fstat
    const ssize_t n = ::read(fd, out.data() + have, out.size() - have);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      out.resize(have);
      return n == 0;
    }
    have += static_cast<std::size_t>(n);
  }
}

}  // namespace td::archive
