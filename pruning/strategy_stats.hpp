// What one strategy did to one request.
#pragma once

#include <cstdint>

namespace td::pruning {

struct StrategyStats {
  const char* name = "";        // stable, snake_case: used in logs, headers and the ledger
  std::uint32_t hits = 0;       // parts or messages it changed, removed or added
  std::uint64_t bytes_saved = 0;  // text bytes it removed (net of markers it wrote)

  bool fired() const { return hits > 0; }
  void add(std::uint64_t before, std::uint64_t after) {
    ++hits;
    if (before > after) bytes_saved += before - after;
  }
};

}  // namespace td::pruning
