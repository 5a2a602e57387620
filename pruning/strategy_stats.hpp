// What one strategy did to one request.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace td::pruning {

struct StrategyStats {
  const char* name = "";          // stable, snake_case: used in logs, headers and the ledger
  std::uint32_t hits = 0;         // parts or messages it changed, removed or added
  std::uint64_t bytes_saved = 0;  // text bytes it removed (net of markers it wrote)

  // Each change, by message (the pipeline keeps only those before the
  // frontier it settles on).
  struct Edit {
    std::uint32_t message;
    std::uint64_t bytes_saved;
  };
  std::vector<Edit> edits = {};

  bool fired() const { return hits > 0; }
  void add(std::uint32_t message, std::uint64_t before, std::uint64_t after) {
    const std::uint64_t saved = before > after ? before - after : 0;
    ++hits;
    bytes_saved += saved;
    edits.push_back({message, saved});
  }
  // The same stats counting only the changes to messages before `end`, but
  // those of `except` (ascending).
  StrategyStats before(std::uint32_t end, std::span<const std::uint32_t> except = {}) const {
    StrategyStats s;
    s.name = name;
    for (const Edit& e : edits)
      if (e.message < end && !std::binary_search(except.begin(), except.end(), e.message))
        s.add(e.message, e.bytes_saved, 0);
    return s;
  }
};

// "a,b,c": the names of the strategies that fired, as the log line and
// replay's rows print them.
inline std::string join_names(std::span<const std::string_view> names) {
  std::string out;
  for (std::string_view name : names) {
    if (!out.empty()) out += ',';
    out += name;
  }
  return out;
}

}  // namespace td::pruning
