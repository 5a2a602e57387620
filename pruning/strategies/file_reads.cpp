#include "pruning/strategies/file_reads.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <unordered_map>

#include "pruning/snip.hpp"
#include "pruning/strategies/working_memory.hpp"

namespace td::pruning {

namespace {

// Commands and tools whose output is a file's text, as the agents send them.
constexpr std::array<std::string_view, 9> kReadWords = {"cat ", "head ", "tail ", "sed -n", "nl ",
                                                        "less ", "open ", "view", "file_path"};

std::vector<std::string_view> paths_in(std::string_view arguments) {
  std::vector<std::string_view> out;
  for (std::string_view name : names_in(arguments))
    if (is_path_name(name)) out.push_back(name);
  return out;
}

}  // namespace

bool reads_a_file(std::string_view name, std::string_view arguments) {
  if (name == "Read" || name == "read_file" || name == "view") return true;
  for (std::string_view w : kReadWords)
    if (arguments.find(w) != std::string_view::npos) return true;
  return false;
}

std::vector<bool> unsuperseded_reads(const Conversation& conv, const Profile& profile, std::uint32_t limit) {
  std::vector<bool> out(limit, false);
  const WorkingMemory wm = working_memory(conv, profile);
  const std::uint32_t step = std::max<std::uint32_t>(profile.frontier_step_turns, 1);
  // Block end of each message: the start of the next grid point after its turn.
  std::vector<std::uint32_t> block_end(limit, limit);
  for (std::uint32_t t = 0, i = 0; i < limit; ++i) {
    while (t + 1 < wm.turns() && wm.turn_start[t + 1] <= i) ++t;
    const std::uint32_t next_grid = (t / step + 1) * step;
    block_end[i] = std::min(wm.start_of(next_grid, limit), limit);
  }
  // Each call: where it is, whether it reads, the paths it names.
  struct Call {
    std::uint32_t at;
    bool reads;
    std::vector<std::string_view> paths;
  };
  std::unordered_map<std::string_view, Call> calls;  // by id: the latest call with it
  std::vector<std::pair<std::uint32_t, std::vector<std::string_view>>> named;  // every call's paths, in order
  std::vector<std::vector<std::string_view>> read_paths(limit);               // per read: what it read
  for (std::uint32_t i = 0; i < limit; ++i) {
    for (const Part& p : conv.messages[i].parts) {
      if (p.kind == PartKind::ToolCall) {
        Call c{i, reads_a_file(p.name, p.text), paths_in(p.text)};
        named.emplace_back(i, c.paths);
        if (!p.id.empty()) calls[p.id] = std::move(c);
      } else if (p.kind == PartKind::ToolResult) {
        auto it = calls.find(p.id);
        if (it == calls.end() || !it->second.reads || it->second.paths.empty()) continue;
        out[i] = true;  // superseded below, if a later call of its block names a path it read
        read_paths[i] = it->second.paths;
      }
    }
  }
  // Supersession: a call after the read, before its block ends, naming one of its paths.
  for (std::uint32_t i = 0; i < limit; ++i) {
    if (!out[i]) continue;
    for (const auto& [at, paths] : named) {
      if (at <= i) continue;
      if (at >= block_end[i]) break;
      for (std::string_view a : paths)
        for (std::string_view b : read_paths[i])
          if (a == b) out[i] = false;
    }
  }
  return out;
}

}  // namespace td::pruning
