// The archive: what semantic eviction took out of a request, kept on disk so
// the model (tokendiet_recall), the API (GET /v1/tokendiet/archive/<id>) and
// the operator (`tokendiet archive`) can read it back
// (docs/design.md §The archive).
//
// Layout, under the directory the Store is opened on:
//
//   <dir>/<key fp>/<id>    one file per entry: exactly the evicted text
//   <dir>/<key fp>/index   one line per entry (archive/index.hpp)
//
// <key fp> is the API key's fingerprint (proxy/net/http_rules.hpp), `nokey`
// for anonymous clients (requests without one): an entry is read only with
// the key that wrote it, and an anonymous client's never by key (read() with
// "" finds nothing; only the operator's read_any() and list() see them).
// Directories are 0700, files 0600.
//
// Content-addressed and idempotent: an entry's id is archive_id(text)
// (pruning/archived_output.hpp); writing an id the key already has only
// marks it used now. write() returns once every entry is durable (temp file,
// fsync, rename, fsync of the directory; the index line appended and
// fsynced). Retention: after each write, entries not used within max_age
// go, then the least recently used while the archive holds more than
// max_bytes; never an entry of the write that just happened.
//
// Thread-safe: writes are serialised by a mutex; reads take it only to look
// the entry up. Files only: no sockets, no proxy code.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pruning/archived_output.hpp"

namespace td::archive {

struct Retention {
  std::uint64_t max_bytes = 1ull << 30;          // 0: no size bound
  std::chrono::seconds max_age{30 * 24 * 3600};  // since last used; 0: no age bound
};

struct EntryInfo {
  std::string key_fp;  // "" for anonymous clients (requests without a key)
  std::string id;
  std::string task;
  std::uint32_t tokens = 0;
  std::uint64_t bytes = 0;
  std::int64_t created = 0;  // unix seconds
  std::int64_t used = 0;     // unix seconds: last written or referenced
};

struct Entry {
  EntryInfo info;
  std::string text;
};

class Store {
 public:
  using Clock = std::function<std::int64_t()>;  // unix seconds

  struct Options {
    Retention retention;
    bool read_only = false;  // `tokendiet archive`: never writes, removes or creates
    Clock clock;             // default: the system clock
  };

  // Opens the archive under `dir` (created on the first write, not here) and
  // reads its indexes. Never fails: a directory that cannot be read is an
  // empty archive, and writes to it fail.
  explicit Store(std::string dir, Options options);
  explicit Store(std::string dir) : Store(std::move(dir), Options{}) {}

  // Every entry durable under `key_fp` before it returns: true. False (and
  // last_error() says why) when any entry could not be written; entries
  // written before the failure stay, nothing else changes.
  bool write(std::string_view key_fp, std::span<const pruning::ArchivedOutput> entries);

  // The entry `id` of `key_fp`, its text checked against its id; nullopt
  // when that key has no such entry (or its file is gone or damaged), and
  // always for "": no request proves it is the anonymous client that wrote
  // an entry (docs/design.md §The archive).
  std::optional<Entry> read(std::string_view key_fp, std::string_view id) const;

  // Any key's entry `id` (the operator's view: `tokendiet archive show`).
  std::optional<Entry> read_any(std::string_view id) const;

  // Every entry, oldest first (by creation); of `key_fp` only when given.
  std::vector<EntryInfo> list(std::optional<std::string_view> key_fp = std::nullopt) const;

  std::uint64_t total_bytes() const;
  std::string last_error() const;
  const std::string& dir() const { return dir_; }

  // Since the store was opened: entries retention removed; entries (and
  // their bytes) written for the first time (a write of an id already there
  // does not count).
  std::uint64_t removed_entries() const;
  std::uint64_t written_entries() const;
  std::uint64_t written_bytes() const;

 private:
  using Entries = std::map<std::string, EntryInfo, std::less<>>;  // by id

  void load();
  void load_key_dir(const std::string& key_fp);
  std::string key_dir(std::string_view key_fp) const;
  std::string write_entry(std::string_view key_fp, const pruning::ArchivedOutput& entry, std::int64_t now,
                          std::string& index_lines, std::vector<EntryInfo>& added);
  void touch(EntryInfo& info, std::int64_t now);
  void enforce_retention(std::int64_t now, std::string_view keep_fp, std::span<const pruning::ArchivedOutput> keep);
  void rewrite_index(const std::string& key_fp);
  std::optional<Entry> read_file(const EntryInfo& info) const;

  std::string dir_;
  Options options_;
  mutable std::mutex mutex_;
  std::map<std::string, Entries, std::less<>> keys_;  // by key fp
  std::uint64_t total_bytes_ = 0;
  std::uint64_t removed_ = 0;
  std::uint64_t written_entries_ = 0;
  std::uint64_t written_bytes_ = 0;
  std::string last_error_;
};

// The directory name of a key fingerprint ("" -> "nokey").
std::string key_dir_name(std::string_view key_fp);

}  // namespace td::archive
