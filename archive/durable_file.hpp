// Files that survive a crash once the call that wrote them returns: the
// archive's entries and index (docs/design.md §The archive). POSIX only.
//
// Every call returns "" on success, else why not (with strerror's text);
// none throws for an I/O error.
#pragma once

#include <string>
#include <string_view>

namespace td::archive {

// `dir` and its missing parents created with mode 0700 (an existing one is
// left as it is, unless it is `dir` itself: then it is made 0700).
std::string make_private_dir(const std::string& dir);

// `path` holds exactly `bytes`, durably: written to a temporary file beside
// it (mode 0600), fsynced, renamed over `path`, then the directory fsynced,
// so after a crash `path` is either absent or whole. With `sync_directory`
// false the caller fsyncs the directory itself (sync_dir), once for several
// files, before it counts on them.
std::string write_file_durably(const std::string& path, std::string_view bytes, bool sync_directory = true);

// `line` appended to `path` (created 0600), file fsynced; a new file's
// directory fsynced too.
std::string append_durably(const std::string& path, std::string_view line);

// fsync of a directory: what renames and unlinks in it did is on disk.
std::string sync_dir(const std::string& dir);

// The whole file into `out`; false when it cannot be read.
bool read_whole_file(const std::string& path, std::string& out);

}  // namespace td::archive
