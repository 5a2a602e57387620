// What semantic eviction took out of a request: one entry per tool output (or
// tool-call argument) a tombstone replaced, for the archive (archive/store.hpp)
// to keep before the request goes upstream (docs/design.md §The archive).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace td::pruning {

struct ArchivedOutput {
  std::string id;    // archive_id(text)
  std::string task;  // the completed task's title
  std::uint32_t tokens = 0;
  std::string text;  // the exact decoded text the tombstone replaced
};

// "td-" + 32 lowercase hex digits of XXH3_128(text) (high 64 bits first, as
// XXH128's canonical form): content-addressed, so the same output always gets
// the same id and its tombstone renders the same on every later request.
std::string archive_id(std::string_view text);

}  // namespace td::pruning
