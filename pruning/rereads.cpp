#include "pruning/rereads.hpp"

#include <string_view>
#include <unordered_set>

#include "pruning/snip.hpp"
#include "pruning/strategies/file_reads.hpp"

namespace td::pruning {

namespace {

bool is_read(const Part& p) { return p.kind == PartKind::ToolCall && reads_a_file(p.name, p.text); }

}  // namespace

std::uint32_t count_rereads(const Conversation& conv) {
  std::size_t newest = conv.messages.size();
  while (newest > 0 && conv.messages[newest - 1].role != Role::Assistant) --newest;
  if (newest == 0) return 0;
  const Message& last = conv.messages[newest - 1];
  bool reads = false;
  for (const Part& p : last.parts) reads = reads || is_read(p);
  if (!reads) return 0;  // the common case: no history scan

  std::unordered_set<std::string_view> read_paths;
  auto remember = [&](const Part& p) {
    for (std::string_view name : names_in(p.text))
      if (is_path_name(name)) read_paths.insert(name);
  };
  for (std::size_t i = 0; i + 1 < newest; ++i)
    if (conv.messages[i].role == Role::Assistant)
      for (const Part& p : conv.messages[i].parts)
        if (is_read(p)) remember(p);
  std::uint32_t count = 0;
  for (const Part& p : last.parts) {
    if (!is_read(p)) continue;
    bool again = false;
    for (std::string_view name : names_in(p.text)) again = again || (is_path_name(name) && read_paths.contains(name));
    count += again;
    remember(p);
  }
  return count;
}

}  // namespace td::pruning
