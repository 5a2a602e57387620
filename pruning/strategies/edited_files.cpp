#include "pruning/strategies/edited_files.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <unordered_map>

#include "pruning/snip.hpp"
#include "pruning/strategies/copied_lines.hpp"
#include "pruning/strategies/file_reads.hpp"
#include "pruning/strategies/read_outline.hpp"
#include "pruning/strategies/working_memory.hpp"
#include "pruning/text.hpp"
#include "pruning/tokenizer/hash.hpp"

namespace td::pruning {

namespace {

// Tools that edit the file their arguments name (by the agents' own names).
constexpr std::array<std::string_view, 12> kEditTools = {"Edit",
                                                         "MultiEdit",
                                                         "Write",
                                                         "NotebookEdit",
                                                         "replace",
                                                         "write_file",
                                                         "edit",
                                                         "write",
                                                         "apply_patch",
                                                         "str_replace_editor",
                                                         "str_replace_based_edit_tool",
                                                         "edit_file"};

// A patch names the file it changes after these, up to the line's end.
constexpr std::array<std::string_view, 4> kPatchHeads = {
    "*** Update File: ", "*** Add File: ", "*** Move to: ", "+++ b/"};

// Commands that write the files named from them to the command's end
// (`cat > f <<EOF`: f, not the paths the heredoc's script names).
constexpr std::array<std::string_view, 4> kWriteWords = {"sed -i", "cat >", "tee ", "> "};

// "./x", "x": the same file.
std::string_view normal(std::string_view path) {
  while (path.starts_with("./")) path.remove_prefix(2);
  return path;
}

std::string_view base_name(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// The files a call names: paths whose last part has an extension (not the
// working directory every Codex call names, nor "src/app/" cut short at a
// character no name holds).
std::vector<std::string_view> files_in(std::string_view text) {
  std::vector<std::string_view> out;
  for (std::string_view name : names_in(text)) {
    if (!is_path_name(name)) continue;
    const std::string_view base = base_name(name);
    const std::size_t dot = base.rfind('.');
    if (dot != std::string_view::npos && dot > 0 && dot + 1 < base.size()) out.push_back(normal(name));
  }
  return out;
}

// Two names of one file: equal, or one a trailing part of the other (a
// relative path and the absolute one, a file named alone, the part of a
// path after a character no name holds: "(group)/page.tsx").
bool same_file(std::string_view a, std::string_view b) {
  if (a.size() < b.size()) std::swap(a, b);
  if (b.empty()) return false;
  return a == b || (a.ends_with(b) && (b.front() == '/' || a[a.size() - b.size() - 1] == '/'));
}

bool same_file_any(const std::vector<std::string_view>& as, const std::vector<std::string_view>& bs) {
  for (std::string_view a : as)
    for (std::string_view b : bs)
      if (same_file(a, b)) return true;
  return false;
}

// A read's line without its number ("    12→", "  12\t"): as an edit quotes it.
std::string_view unnumbered(std::string_view line) {
  std::size_t i = 0;
  while (i < line.size() && line[i] == ' ') ++i;
  const std::size_t digits = i;
  while (i < line.size() && line[i] >= '0' && line[i] <= '9') ++i;
  if (i == digits) return line;
  if (line.substr(i).starts_with("\u2192")) return line.substr(i + 3);
  if (i < line.size() && line[i] == '\t') return line.substr(i + 1);
  return line;
}

// One tool result answering a call that reads a file.
struct Read {
  std::uint32_t message = 0, part = 0, turn = 0;
  std::vector<std::string_view> paths;
  std::uint64_t bytes = 0;
  std::vector<std::uint32_t> lines;        // shown_line_numbers() of its output
  std::vector<std::uint32_t> edits;        // turns of the edits of its paths, ascending
  std::uint32_t superseded = kHeldBeyond;  // turn of the first newer read showing its lines
  bool numbered = false;                   // numbered_as_read(): a whole file as Claude Code's Read shows it
};

// Whether [0, limit) may hold a fresh read: a tool output of at least the
// size, numbered as a whole-file Read. Without one, fresh holds need no walk
// of the history's calls (a Codex session has none).
bool any_fresh_candidate(const Conversation& conv, const StaleToolOutputsOptions& opt, std::uint32_t limit) {
  for (std::uint32_t i = 0; i < limit; ++i)
    for (const Part& p : conv.messages[i].parts)
      if (p.kind == PartKind::ToolResult && p.text.size() >= opt.stale_tool_outputs_keep_fresh_reads_bytes &&
          numbered_as_read(p.text))
        return true;
  return false;
}

}  // namespace

std::vector<std::string_view> edited_paths(std::string_view name, std::string_view arguments) {
  std::vector<std::string_view> out;
  for (std::string_view head : kPatchHeads)
    for (std::size_t at = arguments.find(head); at != std::string_view::npos; at = arguments.find(head, at + 1)) {
      std::size_t end = at + head.size();
      while (end < arguments.size() && arguments[end] != '\n' && arguments[end] != '\\' && arguments[end] != '"') ++end;
      const std::string_view path = arguments.substr(at + head.size(), end - at - head.size());
      if (!path.empty()) out.push_back(normal(path));
    }
  if (!out.empty()) return out;
  if (std::find(kEditTools.begin(), kEditTools.end(), name) != kEditTools.end()) {
    if (name.starts_with("str_replace") && arguments.find("\"view\"") != std::string_view::npos) return out;
    return files_in(arguments);
  }
  for (std::string_view word : kWriteWords)
    for (std::size_t at = arguments.find(word); at != std::string_view::npos; at = arguments.find(word, at + 1)) {
      if (word == "> " && at > 0 && (arguments[at - 1] == '2' || arguments[at - 1] == '&')) continue;  // 2> /dev/null
      std::size_t end = at + word.size();  // the command's end: a line break, `;`, `&&`, a pipe, a heredoc
      while (end < arguments.size()) {
        const char c = arguments[end];
        if (c == '\n' || c == ';' || c == '&' || c == '|' || c == '<') break;
        if (c == '\\' && end + 1 < arguments.size() && arguments[end + 1] == 'n') break;  // "\n" in JSON text
        end += c == '\\' ? 2 : 1;
      }
      end = std::min(end, arguments.size());
      for (std::string_view f : files_in(arguments.substr(at, end - at)))
        if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
    }
  return out;
}

bool writes_a_file(const Part& call, Memo<CallWrites>* writes) {
  const std::uint64_t salt = memo_salt("call_writes", {tok::hash_bytes(call.name.data(), call.name.size())});
  return memoized(writes, salt, call, [&](std::string_view text) -> std::optional<CallWrites> {
           if (edited_paths(call.name, text).empty()) return std::nullopt;
           return CallWrites{};
         }) != nullptr;
}

ReadHolds edited_file_holds(const Conversation& conv, const StaleToolOutputsOptions& opt, std::uint32_t limit) {
  limit = std::min<std::uint32_t>(limit, static_cast<std::uint32_t>(conv.messages.size()));
  ReadHolds holds;
  holds.until.assign(limit, 0);
  const std::uint32_t window = opt.stale_tool_outputs_keep_edited_turns;
  const std::uint32_t fresh_turns = opt.stale_tool_outputs_keep_fresh_reads_turns;
  const std::uint64_t budget = opt.stale_tool_outputs_held_reads_bytes;
  if ((window == 0 && fresh_turns == 0) || budget == 0 || limit == 0) return holds;
  if (window == 0 && !any_fresh_candidate(conv, opt, limit)) return holds;  // most sessions: no walk of their calls
  const WorkingMemory wm = working_memory(conv, opt);
  const std::uint32_t step = std::max<std::uint32_t>(opt.frontier_step_turns, 1);

  // The reads and the edits, by the turn they were made in; edits of each file by its base name.
  std::vector<Read> reads;
  std::unordered_map<std::string_view, std::vector<std::pair<std::uint32_t, std::string_view>>> edits;
  std::unordered_map<std::string_view, std::vector<std::string_view>> read_calls;  // id -> paths
  // With copies: each line (its copy_line_key) -> the newest read holding it.
  const std::uint64_t copy_bytes =
      opt.stale_tool_outputs_keep_edited_copies ? opt.stale_assistant_text_copied_line_bytes : 0;
  std::unordered_map<std::uint64_t, std::size_t> newest;
  std::uint32_t turn = 0;
  for (std::uint32_t i = 0; i < limit; ++i) {
    while (turn + 1 < wm.turns() && wm.turn_start[turn + 1] <= i) ++turn;
    const Message& m = conv.messages[i];
    if (m.removed) continue;
    if (copy_bytes > 0 && m.role == Role::Assistant && !newest.empty()) {
      std::vector<std::size_t> used;
      for (const Part& p : m.parts) {
        if ((p.kind != PartKind::Text && p.kind != PartKind::ToolCall) || p.text.size() < copy_bytes) continue;
        const std::string decoded = p.kind == PartKind::ToolCall ? line_text(p) : std::string{};
        for (std::string_view line :
             text::lines(p.kind == PartKind::ToolCall ? std::string_view(decoded) : std::string_view(p.text)))
          if (const std::uint64_t k = copy_line_key(line, copy_bytes))
            if (auto it = newest.find(k); it != newest.end()) used.push_back(it->second);
      }
      std::sort(used.begin(), used.end());
      used.erase(std::unique(used.begin(), used.end()), used.end());
      for (std::size_t k : used) reads[k].edits.push_back(turn);
    }
    for (std::uint32_t j = 0; j < m.parts.size(); ++j) {
      const Part& p = m.parts[j];
      if (p.kind == PartKind::ToolCall) {
        for (std::string_view path : edited_paths(p.name, p.text)) edits[base_name(path)].emplace_back(turn, path);
        if (!p.id.empty() && reads_a_file(p.name, p.text)) {
          std::vector<std::string_view> paths = files_in(p.text);
          if (!paths.empty()) read_calls[p.id] = std::move(paths);
        }
      } else if (p.kind == PartKind::ToolResult && !p.text.empty()) {
        auto call = read_calls.find(p.id);
        if (call == read_calls.end()) continue;
        Read& r = reads.emplace_back();
        r.message = i;
        r.part = j;
        r.turn = turn;
        r.paths = call->second;
        r.bytes = p.text.size();
        r.lines = shown_line_numbers(p.text);
        r.numbered = numbered_as_read(p.text);
        if (copy_bytes > 0) {
          const std::string text = line_text(p);  // a JSON object's output by its decoded lines
          for (std::string_view line : text::lines(text))
            if (const std::uint64_t k = copy_line_key(unnumbered(line), copy_bytes)) newest[k] = reads.size() - 1;
        }
      }
    }
  }
  // A fresh read: a whole file the agent has just read (it edits from it
  // next, often after more reads: docs/benchmarks.md §Fresh reads held).
  auto fresh = [&](const Read& r) {
    return fresh_turns > 0 && r.numbered && r.bytes >= opt.stale_tool_outputs_keep_fresh_reads_bytes;
  };
  for (std::size_t k = 0; k < reads.size(); ++k) {
    Read& r = reads[k];
    for (std::string_view path : r.paths) {
      auto it = edits.find(base_name(path));
      if (it == edits.end()) continue;
      for (const auto& [t, edited] : it->second)
        if (same_file(path, edited)) r.edits.push_back(t);
    }
    std::sort(r.edits.begin(), r.edits.end());
    if (r.edits.empty() && !fresh(r)) continue;
    // Read anew: by a read showing its lines, or one showing no numbers.
    // Claude Code's Edit and Write name their file as Read does
    // (`file_path`), so their answers ("The file … has been updated") count
    // among the latter, and a fresh read is released at its file's first
    // edit: holding it past that cost more on the charged replay than the
    // recalls it spared (docs/benchmarks.md §Claude Code's newer Read).
    for (std::size_t j = k + 1; j < reads.size(); ++j) {
      const Read& newer = reads[j];
      if (!same_file_any(r.paths, newer.paths)) continue;
      if (!r.lines.empty() && !newer.lines.empty() &&
          !std::includes(newer.lines.begin(), newer.lines.end(), r.lines.begin(), r.lines.end()))
        continue;  // another part of the file
      r.superseded = newer.turn;
      break;
    }
  }

  // Grid point by grid point: release the held reads no longer edited (or
  // read anew), then hold the reads whose block ends here, in order, within
  // the budget.
  auto edited_before = [&](const Read& r, std::uint32_t g) {
    auto it = std::lower_bound(r.edits.begin(), r.edits.end(), g > window ? g - window : 0);
    return it != r.edits.end() && *it < g;
  };
  // Held at grid point g (a read made before g): edited in the window
  // before g, or fresh there, and not read anew.
  auto holds_at = [&](const Read& r, std::uint32_t g) {
    const bool still_fresh = fresh(r) && std::uint64_t{r.turn} + fresh_turns >= g;
    return (still_fresh || edited_before(r, g)) && r.superseded >= g;
  };
  std::vector<std::size_t> held;
  std::vector<bool> ever_held(reads.size(), false);
  std::uint64_t held_bytes = 0;
  // A message sends its held reads whole until the last of them is released.
  auto release = [&](const Read& r, std::uint32_t g) {
    std::uint32_t& until = holds.until[r.message];
    if (until != kHeldBeyond) until = std::max(until, g);
  };
  std::size_t next = 0;
  const auto turns = static_cast<std::uint32_t>(std::lower_bound(wm.turn_start.begin(), wm.turn_start.end(), limit) -
                                                wm.turn_start.begin());
  for (std::uint32_t g = step; g <= turns; g += step) {
    std::erase_if(held, [&](std::size_t k) {
      const Read& r = reads[k];
      if (holds_at(r, g)) return false;
      release(r, g);
      held_bytes -= r.bytes;
      return true;
    });
    for (; next < reads.size() && reads[next].turn < g; ++next) {
      const Read& r = reads[next];
      if (!holds_at(r, g) || r.bytes > budget) continue;
      // The newest reads first: the oldest held ones make room, released here.
      while (held_bytes + r.bytes > budget) {
        release(reads[held.front()], g);
        held_bytes -= reads[held.front()].bytes;
        held.erase(held.begin());
      }
      held.push_back(next);
      ever_held[next] = true;
      held_bytes += r.bytes;
    }
  }
  for (std::size_t k : held) release(reads[k], kHeldBeyond);
  for (std::size_t k = 0; k < reads.size(); ++k)
    if (ever_held[k]) holds.parts.emplace_back(reads[k].message, reads[k].part);
  return holds;
}

}  // namespace td::pruning
