#include "archive/store.hpp"

#include <algorithm>
#include <filesystem>
#include <set>
#include <tuple>

#include <fcntl.h>
#include <sys/stat.h>

#include "archive/durable_file.hpp"
#include "archive/index.hpp"

namespace td::archive {
namespace {

constexpr std::string_view kNoKeyDir = "nokey";
constexpr std::string_view kIndexFile = "index";
// A referenced entry's last-used time is refreshed at most this often: it
// only has to outlive max_age, and a refresh is a syscall.
constexpr std::int64_t kTouchEvery = 60;

std::int64_t system_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

std::string key_dir_name(std::string_view key_fp) {
  return key_fp.empty() ? std::string(kNoKeyDir) : std::string(key_fp);
}

Store::Store(std::string dir, Options options) : dir_(std::move(dir)), options_(std::move(options)) {
  if (!options_.clock) options_.clock = system_now;
  load();
}

std::string Store::key_dir(std::string_view key_fp) const { return dir_ + "/" + key_dir_name(key_fp); }

void Store::load() {
  std::error_code ec;
  for (const auto& item : std::filesystem::directory_iterator(dir_, ec)) {
    if (!item.is_directory(ec)) continue;
    const std::string name = item.path().filename().string();
    if (name == kNoKeyDir)
      load_key_dir("");
    else if (name.size() == 16 && valid_key_fp(name))
      load_key_dir(name);
  }
}

// One key's index, checked against its files; files the index does not name
// (a crash between the rename and the index line) are adopted as they are,
// and temporary files of an unfinished write are removed.
void Store::load_key_dir(const std::string& key_fp) {
  const std::string dir = key_dir(key_fp);
  Entries& entries = keys_[key_fp];
  std::string text;
  std::vector<IndexLine> lines;
  if (read_whole_file(dir + "/" + std::string(kIndexFile), text)) lines = parse_index(text);
  auto add = [&](const IndexLine& line) {
    struct stat st {};
    if (entries.count(line.id) || ::stat((dir + "/" + line.id).c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
    EntryInfo info{key_fp,
                   line.id,
                   line.task,
                   line.tokens,
                   static_cast<std::uint64_t>(st.st_size),
                   line.created,
                   std::max<std::int64_t>(line.created, st.st_mtime)};
    total_bytes_ += info.bytes;
    entries.emplace(info.id, std::move(info));
  };
  for (const IndexLine& line : lines) add(line);
  std::error_code ec;
  for (const auto& item : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = item.path().filename().string();
    if (name.ends_with(".tmp")) {
      if (!options_.read_only) std::filesystem::remove(item.path(), ec);
      continue;
    }
    if (!valid_id(name) || entries.count(name)) continue;
    struct stat st {};
    if (::stat(item.path().c_str(), &st) != 0) continue;
    add(IndexLine{static_cast<std::int64_t>(st.st_mtime), name, 0, 0, ""});
  }
}

bool Store::write(std::string_view key_fp, std::span<const pruning::ArchivedOutput> entries) {
  std::lock_guard lock(mutex_);
  last_error_.clear();
  if (options_.read_only) {
    last_error_ = "archive opened read-only";
    return false;
  }
  if (!valid_key_fp(key_fp)) {
    last_error_ = "not a key fingerprint";
    return false;
  }
  const std::int64_t now = options_.clock();
  const std::string dir = key_dir(key_fp);
  if (std::string e = make_private_dir(dir_); !e.empty()) return last_error_ = e, false;
  if (std::string e = make_private_dir(dir); !e.empty()) return last_error_ = e, false;
  std::string index_lines;
  std::vector<EntryInfo> added;
  for (const pruning::ArchivedOutput& entry : entries) {
    std::string e = write_entry(key_fp, entry, now, index_lines, added);
    if (!e.empty()) {
      last_error_ = std::move(e);
      break;
    }
  }
  // Entries whose file is in place are kept even when a later one failed:
  // they are whole, and an index line missing for them is made up for when
  // the archive is next opened.
  Entries& known = keys_[std::string(key_fp)];
  for (EntryInfo& info : added) {
    total_bytes_ += info.bytes;
    ++written_entries_;
    written_bytes_ += info.bytes;
    known.insert_or_assign(info.id, std::move(info));
  }
  // One directory fsync for every rename above, then the index lines.
  if (!added.empty()) {
    if (std::string e = sync_dir(dir); !e.empty() && last_error_.empty()) last_error_ = std::move(e);
  }
  if (!index_lines.empty()) {
    if (std::string e = append_durably(dir + "/" + std::string(kIndexFile), index_lines);
        !e.empty() && last_error_.empty())
      last_error_ = std::move(e);
  }
  enforce_retention(now, key_fp, entries);
  return last_error_.empty();
}

std::string Store::write_entry(std::string_view key_fp, const pruning::ArchivedOutput& entry, std::int64_t now,
                               std::string& index_lines, std::vector<EntryInfo>& added) {
  if (!valid_id(entry.id) || pruning::archive_id(entry.text) != entry.id)
    return "entry " + entry.id + ": its id is not archive_id() of its text";
  if (std::any_of(added.begin(), added.end(), [&](const EntryInfo& a) { return a.id == entry.id; })) return "";
  const std::string path = key_dir(key_fp) + "/" + entry.id;
  Entries& known = keys_[std::string(key_fp)];
  if (auto it = known.find(entry.id); it != known.end()) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && static_cast<std::uint64_t>(st.st_size) == entry.text.size()) {
      touch(it->second, now);
      return "";
    }
    total_bytes_ -= it->second.bytes;  // gone from disk: written again below
    known.erase(it);
  }
  if (std::string e = write_file_durably(path, entry.text, false); !e.empty()) return e;  // write() syncs the directory
  index_lines += render_index_line(IndexLine{now, entry.id, entry.tokens, entry.text.size(), entry.task});
  added.push_back(EntryInfo{std::string(key_fp), entry.id, entry.task, entry.tokens, entry.text.size(), now, now});
  return "";
}

// The entry was referenced again: retention counts its age from now. Kept in
// the file's mtime (not synced: a crash only makes it look older).
void Store::touch(EntryInfo& info, std::int64_t now) {
  if (now - info.used < kTouchEvery) return;
  info.used = now;
  const struct timespec times[2] = {{now, 0}, {now, 0}};
  ::utimensat(AT_FDCWD, (key_dir(info.key_fp) + "/" + info.id).c_str(), times, 0);
}

void Store::enforce_retention(std::int64_t now, std::string_view keep_fp,
                              std::span<const pruning::ArchivedOutput> keep) {
  const Retention& r = options_.retention;
  if (r.max_bytes == 0 && r.max_age.count() == 0) return;
  std::vector<const EntryInfo*> candidates;
  for (const auto& [fp, entries] : keys_)
    for (const auto& entry : entries) {
      // (No structured binding here: clang 14, the fuzz build's, cannot capture one.)
      const auto& id = entry.first;
      const bool kept = fp == keep_fp && std::any_of(keep.begin(), keep.end(),
                                                     [&](const pruning::ArchivedOutput& k) { return k.id == id; });
      if (!kept) candidates.push_back(&entry.second);
    }
  // Least recently used first; ties in creation order, then by id, so the
  // order never depends on the maps' layout.
  std::sort(candidates.begin(), candidates.end(), [](const EntryInfo* a, const EntryInfo* b) {
    return std::tie(a->used, a->created, a->key_fp, a->id) < std::tie(b->used, b->created, b->key_fp, b->id);
  });
  std::vector<std::pair<std::string, std::string>> doomed;  // (key fp, id)
  std::uint64_t total = total_bytes_;
  for (const EntryInfo* info : candidates) {
    const bool too_old = r.max_age.count() > 0 && now - info->used > r.max_age.count();
    const bool too_big = r.max_bytes > 0 && total > r.max_bytes;
    if (!too_old && !too_big) break;  // sorted by age: the rest are younger
    total -= info->bytes;
    doomed.emplace_back(info->key_fp, info->id);
  }
  if (doomed.empty()) return;
  std::set<std::string> touched_keys;
  for (const auto& [fp, id] : doomed) {
    Entries& entries = keys_[fp];
    auto it = entries.find(id);
    std::error_code ec;
    std::filesystem::remove(key_dir(fp) + "/" + id, ec);
    total_bytes_ -= it->second.bytes;
    entries.erase(it);
    ++removed_;
    touched_keys.insert(fp);
  }
  for (const std::string& fp : touched_keys) rewrite_index(fp);
}

// The index of `key_fp` without the lines of removed entries.
void Store::rewrite_index(const std::string& key_fp) {
  std::vector<const EntryInfo*> rows;
  for (const auto& [id, info] : keys_[key_fp]) rows.push_back(&info);
  std::sort(rows.begin(), rows.end(), [](const EntryInfo* a, const EntryInfo* b) {
    return std::tie(a->created, a->id) < std::tie(b->created, b->id);
  });
  std::string text;
  for (const EntryInfo* info : rows)
    text += render_index_line({info->created, info->id, info->tokens, info->bytes, info->task});
  if (std::string e = write_file_durably(key_dir(key_fp) + "/" + std::string(kIndexFile), text);
      !e.empty() && last_error_.empty())
    last_error_ = std::move(e);
}

std::optional<Entry> Store::read_file(const EntryInfo& info) const {
  Entry entry{info, {}};
  if (!read_whole_file(key_dir(info.key_fp) + "/" + info.id, entry.text)) return std::nullopt;
  if (pruning::archive_id(entry.text) != info.id) return std::nullopt;  // damaged
  entry.info.bytes = entry.text.size();
  return entry;
}

std::optional<Entry> Store::read(std::string_view key_fp, std::string_view id) const {
  if (key_fp.empty() || !valid_key_fp(key_fp) || !valid_id(id)) return std::nullopt;
  std::optional<EntryInfo> info;
  {
    std::lock_guard lock(mutex_);
    auto key = keys_.find(key_fp);
    if (key == keys_.end()) return std::nullopt;
    auto it = key->second.find(id);
    if (it == key->second.end()) return std::nullopt;
    info = it->second;
  }
  return read_file(*info);
}

std::optional<Entry> Store::read_any(std::string_view id) const {
  if (!valid_id(id)) return std::nullopt;
  std::vector<EntryInfo> found;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [fp, entries] : keys_)
      if (auto it = entries.find(id); it != entries.end()) found.push_back(it->second);
  }
  for (const EntryInfo& info : found)
    if (auto entry = read_file(info)) return entry;
  return std::nullopt;
}

std::vector<EntryInfo> Store::list(std::optional<std::string_view> key_fp) const {
  std::vector<EntryInfo> out;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [fp, entries] : keys_) {
      if (key_fp && fp != *key_fp) continue;
      for (const auto& [id, info] : entries) out.push_back(info);
    }
  }
  std::sort(out.begin(), out.end(), [](const EntryInfo& a, const EntryInfo& b) {
    return std::tie(a.created, a.key_fp, a.id) < std::tie(b.created, b.key_fp, b.id);
  });
  return out;
}

std::uint64_t Store::total_bytes() const {
  std::lock_guard lock(mutex_);
  return total_bytes_;
}

std::string Store::last_error() const {
  std::lock_guard lock(mutex_);
  return last_error_;
}

std::uint64_t Store::removed_entries() const {
  std::lock_guard lock(mutex_);
  return removed_;
}

std::uint64_t Store::written_entries() const {
  std::lock_guard lock(mutex_);
  return written_entries_;
}

std::uint64_t Store::written_bytes() const {
  std::lock_guard lock(mutex_);
  return written_bytes_;
}

}  // namespace td::archive
