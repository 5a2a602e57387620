#include "pruning/rereads.hpp"

#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>
#include <unordered_set>

#include "pruning/strategies/file_reads.hpp"

namespace td::pruning {

std::uint32_t count_rereads(const Conversation& conv, Memo<CallReads>* calls) {
  std::size_t newest = conv.messages.size();
  while (newest > 0 && conv.messages[newest - 1].role != Role::Assistant) --newest;
  if (newest == 0) return 0;
  // The newest message's reads, in order, each by its paths.
  std::vector<std::vector<std::string_view>> reads;
  for (const Part& p : conv.messages[newest - 1].parts)
    if (p.kind == PartKind::ToolCall)
      if (auto [read, paths] = call_reads(p, calls); read) reads.push_back(std::move(paths));
  if (reads.empty()) return 0;  // the common case: no history scan

  // The history's reads are asked only for those paths (their facts are
  // memoized: the history's calls are asked on every request).
  std::unordered_set<std::string_view> wanted;
  for (const auto& paths : reads) wanted.insert(paths.begin(), paths.end());
  std::unordered_set<std::string_view> read_before;
  for (std::size_t i = 0; i + 1 < newest; ++i) {
    if (conv.messages[i].role != Role::Assistant) continue;
    for (const Part& p : conv.messages[i].parts) {
      if (p.kind != PartKind::ToolCall) continue;
      const std::shared_ptr<const CallReads> facts = call_read_facts(p, calls);
      if (!facts || !facts->reads) continue;
      for (const auto& [at, size] : facts->paths)
        if (const std::string_view path = std::string_view(p.text).substr(at, size); wanted.contains(path))
          read_before.insert(path);
    }
  }
  std::uint32_t count = 0;
  for (const auto& paths : reads) {
    count += std::any_of(paths.begin(), paths.end(), [&](std::string_view path) { return read_before.contains(path); });
    read_before.insert(paths.begin(), paths.end());
  }
  return count;
}

}  // namespace td::pruning
