#include "pruning/rereads.hpp"

#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>
#include <unordered_set>

#include "pruning/strategies/file_reads.hpp"

namespace td::pruning {

std::uint32_t count_rereads(const Conversation& conv, Memo<CallReads>* calls) {
  // A call's reads and paths, memoized: the history's calls are asked on every request.
  auto facts = [&](const Part& p) {
    return p.kind == PartKind::ToolCall ? call_reads(p, calls) : std::pair<bool, std::vector<std::string_view>>{};
  };
  std::size_t newest = conv.messages.size();
  while (newest > 0 && conv.messages[newest - 1].role != Role::Assistant) --newest;
  if (newest == 0) return 0;
  const Message& last = conv.messages[newest - 1];
  bool reads = false;
  for (const Part& p : last.parts) reads = reads || facts(p).first;
  if (!reads) return 0;  // the common case: no history scan

  std::unordered_set<std::string_view> read_paths;
  for (std::size_t i = 0; i + 1 < newest; ++i)
    if (conv.messages[i].role == Role::Assistant)
      for (const Part& p : conv.messages[i].parts)
        if (const auto [read, paths] = facts(p); read) read_paths.insert(paths.begin(), paths.end());
  std::uint32_t count = 0;
  for (const Part& p : last.parts) {
    const auto [read, paths] = facts(p);
    if (!read) continue;
    count += std::any_of(paths.begin(), paths.end(), [&](std::string_view path) { return read_paths.contains(path); });
    read_paths.insert(paths.begin(), paths.end());
  }
  return count;
}

}  // namespace td::pruning
