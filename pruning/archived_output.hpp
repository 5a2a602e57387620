// What semantic eviction took out of a request (pruning/strategies/completed_tasks.hpp),
// for the archive (docs/design.md §Policy, Semantic): one entry per tombstone
// in the written request, recomputed every request (tombstones are a pure
// function of the history).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace td::pruning {

struct ArchivedOutput {
  std::string id;            // archive_id(text): the name the tombstone gives
  std::string task;          // the task's title (several tasks: their titles, "; " between)
  std::uint32_t tokens = 0;  // of `text`, as the request's counter counts it
  std::string text;          // exactly the decoded text the tombstone replaced
};

// "td-" + 32 lowercase hex digits of XXH3-128 of `text` (high 64 bits first):
// content-addressed, so the same output gets the same id on every request.
std::string archive_id(std::string_view text);

}  // namespace td::pruning
