#include "pruning/strategies/file_reads.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <unordered_map>
#include <utility>

#include "pruning/snip.hpp"
#include "pruning/strategies/working_memory.hpp"
#include "pruning/tokenizer/hash.hpp"

namespace td::pruning {

namespace {

// Words that start a command printing a file's text, as the agents send
// them (`grep ` only with context, `view"` an editor's {"command": "view"}).
// Claude Code's Read numbers its lines "    12→" (U+2192).
constexpr std::string_view kArrow = "\u2192";

constexpr std::array<std::string_view, 9> kReadWords = {"cat ",  "head ", "tail ", "sed -n", "nl ",
                                                        "less ", "open ", "grep ", "view\""};

std::vector<std::string_view> paths_in(std::string_view arguments) {
  std::vector<std::string_view> out;
  for (std::string_view name : names_in(arguments))
    if (is_path_name(name)) out.push_back(name);
  return out;
}

// Arguments are JSON text: a line break is a newline or the escape "\n".
// Its length at `j`, 0 if there is none.
std::size_t line_break_at(std::string_view a, std::size_t j) {
  if (j >= a.size()) return 0;
  if (a[j] == '\n') return 1;
  return a[j] == '\\' && j + 1 < a.size() && a[j + 1] == 'n' ? 2 : 0;
}

// The position after the line that `j` is on (past its line break).
std::size_t next_line(std::string_view a, std::size_t j) {
  while (j < a.size() && !line_break_at(a, j)) j += a[j] == '\\' ? 2 : 1;
  return std::min(j + line_break_at(a, j), a.size());
}

// Whether the word at `pos` starts a command: after the start of the
// arguments, a JSON key or array element, `;`, `&&`, `||`, `{` or a line
// break (blanks, quotes and opening brackets between), not after a pipe.
bool starts_command(std::string_view a, std::size_t pos) {
  std::size_t i = pos;
  auto lead = [](char c) { return c == ' ' || c == '\t' || c == '"' || c == '\'' || c == '(' || c == '['; };
  while (i > 0 && lead(a[i - 1])) --i;
  if (i == 0) return true;
  switch (a[i - 1]) {
    case ':':
    case ',':
    case ';':
    case '{':
    case '&':
    case '\n':
      return true;
    case '|':
      return i >= 2 && a[i - 2] == '|';  // `||`; one `|` is a pipe
    case 'n':
      return i >= 2 && a[i - 2] == '\\' && (i < 3 || a[i - 3] != '\\');  // "\n", not "\\n"
    default:
      return false;
  }
}

// The command from `pos` up to its end: a pipe, `;`, `&`, a line break or
// the end of the JSON string (an unescaped quote).
std::string_view command_at(std::string_view a, std::size_t pos) {
  std::size_t j = pos;
  while (j < a.size() && !line_break_at(a, j)) {
    const char c = a[j];
    if (c == '|' || c == ';' || c == '&' || c == '"') break;
    j += c == '\\' ? 2 : 1;
  }
  return a.substr(pos, std::min(j, a.size()) - pos);
}

// Whether a command writes a file (`cat > f`; not `2>` or `>&2`) or reads
// standard input from a heredoc (`cat <<EOF`): it prints no file.
bool writes_or_reads_heredoc(std::string_view command) {
  if (command.find("<<") != std::string_view::npos) return true;
  for (std::size_t j = command.find('>'); j != std::string_view::npos; j = command.find('>', j + 1)) {
    const bool descriptor = j > 0 && command[j - 1] >= '0' && command[j - 1] <= '9';
    const bool duplicate = j + 1 < command.size() && command[j + 1] == '&';
    if (!descriptor && !duplicate) return true;
  }
  return false;
}

// Whether a grep command prints context lines around its matches (-A, -B,
// -C, alone or among other letters, or the long options): a read of the
// lines around a definition.
bool greps_with_context(std::string_view command) {
  for (std::size_t j = 0; j < command.size();) {
    const std::size_t end = std::min(command.find(' ', j), command.size());
    const std::string_view word = command.substr(j, end - j);
    j = end + 1;
    if (word.starts_with("--")) {
      if (word.starts_with("--context") || word.starts_with("--after-context") || word.starts_with("--before-context"))
        return true;
    } else if (word.starts_with("-")) {
      for (char c : word.substr(1)) {
        if (c >= '0' && c <= '9') break;  // -n5A: the letters before a count only
        if (c == 'A' || c == 'B' || c == 'C') return true;
      }
    }
  }
  return false;
}

// The bodies of the heredocs in `a` (from the line after `<<WORD` up to the
// line WORD): their lines are a file's text, not commands.
std::vector<std::pair<std::size_t, std::size_t>> heredoc_bodies(std::string_view a) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (std::size_t at = a.find("<<"); at != std::string_view::npos; at = a.find("<<", at)) {
    std::size_t j = at + 2;
    at = j;
    if (j < a.size() && a[j] == '<') continue;  // <<<: a here-string, no body
    while (j < a.size() && (a[j] == ' ' || a[j] == '-' || a[j] == '\'' || a[j] == '"' || a[j] == '\\')) ++j;
    const std::size_t w = j;
    while (j < a.size() && (std::isalnum(static_cast<unsigned char>(a[j])) || a[j] == '_')) ++j;
    const std::string_view word = a.substr(w, j - w);
    if (word.empty()) continue;
    const std::size_t body = next_line(a, j);
    std::size_t line = body;
    while (line < a.size()) {
      std::size_t k = line;  // <<- strips leading tabs
      while (k < a.size() && (a[k] == ' ' || a[k] == '\t' || (a[k] == '\\' && k + 1 < a.size() && a[k + 1] == 't')))
        k += a[k] == '\\' ? 2 : 1;
      const std::size_t after = k + word.size();
      if (a.substr(k, word.size()) == word && (after >= a.size() || line_break_at(a, after) || a[after] == '"')) break;
      line = next_line(a, line);
    }
    out.emplace_back(body, line);
    at = std::max(line, at);
  }
  return out;
}

}  // namespace

bool reads_a_file(std::string_view name, std::string_view arguments) {
  if (name == "Read" || name == "read_file" || name == "read" || name == "view") return true;
  if (arguments.find("\"file_path\"") != std::string_view::npos) return true;  // a Read-like tool's key
  const auto bodies = heredoc_bodies(arguments);
  auto in_heredoc = [&](std::size_t pos) {
    return std::any_of(bodies.begin(), bodies.end(), [&](const auto& b) { return pos >= b.first && pos < b.second; });
  };
  for (std::string_view w : kReadWords)
    for (std::size_t pos = arguments.find(w); pos != std::string_view::npos; pos = arguments.find(w, pos + 1)) {
      if (in_heredoc(pos) || !starts_command(arguments, pos)) continue;
      const std::string_view command = command_at(arguments, pos);
      if (writes_or_reads_heredoc(command)) continue;
      if (w == "grep " && !greps_with_context(command)) continue;
      return true;
    }
  return false;
}

std::vector<std::uint32_t> shown_line_numbers(std::string_view text) {
  std::vector<std::uint32_t> numbers;
  std::size_t lines = 0;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    std::size_t i = 0;
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i == line.size()) continue;
    ++lines;
    std::size_t d = i;
    std::uint32_t n = 0;
    while (d < line.size() && d - i < 9 && line[d] >= '0' && line[d] <= '9')
      n = n * 10 + std::uint32_t(line[d++] - '0');
    if (d > i && d < line.size() &&
        (line[d] == ':' || line[d] == '-' || line[d] == '\t' || line.substr(d).starts_with(kArrow)))
      numbers.push_back(n);
  }
  if (numbers.size() < 3 || numbers.size() * 10 < lines * 6) return {};
  std::sort(numbers.begin(), numbers.end());
  numbers.erase(std::unique(numbers.begin(), numbers.end()), numbers.end());
  return numbers;
}

std::shared_ptr<const CallReads> call_read_facts(const Part& call, Memo<CallReads>* memo) {
  const std::uint64_t salt = memo_salt("call_reads", {tok::hash_bytes(call.name.data(), call.name.size())});
  return memoized(memo, salt, call, [&](std::string_view text) -> std::optional<CallReads> {
    CallReads r;
    r.reads = reads_a_file(call.name, text);
    for (std::string_view path : paths_in(text))
      r.paths.emplace_back(static_cast<std::uint32_t>(path.data() - text.data()),
                           static_cast<std::uint32_t>(path.size()));
    if (!r.reads && r.paths.empty()) return std::nullopt;
    return r;
  });
}

std::pair<bool, std::vector<std::string_view>> call_reads(const Part& call, Memo<CallReads>* memo) {
  const std::shared_ptr<const CallReads> facts = call_read_facts(call, memo);
  std::pair<bool, std::vector<std::string_view>> out{false, {}};
  if (!facts) return out;
  out.first = facts->reads;
  const std::string_view text(call.text);
  for (const auto& [at, size] : facts->paths) out.second.push_back(text.substr(at, size));
  return out;
}

std::vector<bool> unsuperseded_reads(const Conversation& conv, const StaleToolOutputsOptions& opt, std::uint32_t limit,
                                     Memo<CallReads>* memo) {
  std::vector<bool> out(limit, false);
  const WorkingMemory wm = working_memory(conv, opt);
  const std::uint32_t step = std::max<std::uint32_t>(opt.frontier_step_turns, 1);
  // Block end of each message: the start of the next grid point after its turn.
  std::vector<std::uint32_t> block_end(limit, limit);
  for (std::uint32_t t = 0, i = 0; i < limit; ++i) {
    while (t + 1 < wm.turns() && wm.turn_start[t + 1] <= i) ++t;
    const std::uint32_t next_grid = (t / step + 1) * step;
    block_end[i] = std::min(wm.start_of(next_grid, limit), limit);
  }
  // Each call: where it is, whether it reads (a path an earlier call named,
  // if revisits are required), the paths it names.
  struct Call {
    std::uint32_t at;
    bool reads;
    std::vector<std::string_view> paths;
  };
  struct Named {
    std::uint32_t at;
    std::vector<std::string_view> paths;
    std::string_view read_id;  // the call's id if it reads a file (revisit or not), else empty
  };
  std::unordered_map<std::string_view, Call> calls;                  // by id: the latest call with it
  std::unordered_set<std::string_view> named_before;                 // paths named by the calls so far
  std::vector<Named> named;                                          // every call, in order
  std::vector<std::vector<std::string_view>> read_paths(limit);      // per read: what it read
  std::vector<std::string_view> read_id(limit);                      // per read: its call's id
  std::unordered_set<std::string_view> read_ids;                     // calls that read a file, revisit or not
  std::unordered_map<std::string_view, std::string_view> read_text;  // by call id: such a call's output
  for (std::uint32_t i = 0; i < limit; ++i) {
    for (const Part& p : conv.messages[i].parts) {
      if (p.kind == PartKind::ToolCall) {
        auto [reads, paths] = call_reads(p, memo);
        Call c{i, reads, std::move(paths)};
        named.push_back({i, c.paths, c.reads ? std::string_view(p.id) : std::string_view{}});
        if (c.reads) read_ids.insert(p.id);
        const bool revisits =
            std::any_of(c.paths.begin(), c.paths.end(), [&](std::string_view a) { return named_before.contains(a); });
        if (opt.stale_tool_outputs_keep_reads_revisited && !revisits) c.reads = false;
        named_before.insert(c.paths.begin(), c.paths.end());
        if (!p.id.empty()) calls[p.id] = std::move(c);
      } else if (p.kind == PartKind::ToolResult) {
        if (read_ids.contains(p.id)) read_text[p.id] = p.text;
        auto it = calls.find(p.id);
        if (it == calls.end() || !it->second.reads || it->second.paths.empty()) continue;
        out[i] = true;  // superseded below, if a later call of its block names a path it read
        read_paths[i] = it->second.paths;
        read_id[i] = p.id;
      }
    }
  }
  // The line numbers a read's output shows, computed once per read asked about.
  std::unordered_map<std::string_view, std::vector<std::uint32_t>> shown;
  auto numbers_of = [&](std::string_view id) -> const std::vector<std::uint32_t>& {
    auto [it, fresh] = shown.try_emplace(id);
    if (fresh) {
      auto text = read_text.find(id);
      if (text != read_text.end()) it->second = shown_line_numbers(text->second);
    }
    return it->second;
  };
  // Supersession: a call after the read, before its block ends, naming one
  // of its paths; but a newer numbered read that does not show every line
  // the older one showed (`grep -n -A 50` of another function of the same
  // file) leaves the older one whole: the agent copies from what it saw.
  for (std::uint32_t i = 0; i < limit; ++i) {
    if (!out[i]) continue;
    for (const Named& later : named) {
      if (later.at <= i) continue;
      if (later.at >= block_end[i]) break;
      const bool same_path = std::any_of(later.paths.begin(), later.paths.end(), [&](std::string_view a) {
        return std::find(read_paths[i].begin(), read_paths[i].end(), a) != read_paths[i].end();
      });
      if (!same_path) continue;
      if (!later.read_id.empty()) {
        const std::vector<std::uint32_t>& mine = numbers_of(read_id[i]);
        const std::vector<std::uint32_t>& theirs = numbers_of(later.read_id);
        if (!mine.empty() && !theirs.empty() && !std::includes(theirs.begin(), theirs.end(), mine.begin(), mine.end()))
          continue;
      }
      out[i] = false;
      break;
    }
  }
  return out;
}

KeptReadLines::KeptReadLines(const StaleToolOutputsOptions& opt)
    : run_bytes_(opt.stale_tool_outputs_keep_reads_dedupe_run_bytes),
      line_chars_(opt.stale_tool_outputs_keep_reads_dedupe_line_chars),
      recall_(opt.recall) {}

std::string KeptReadLines::dedupe(std::string_view read) {
  std::string out;
  std::vector<std::uint64_t> mine;
  std::size_t run_start = 0, run_lines = 0;  // the current run of lines seen before
  std::size_t line = 0;                      // 1-based number of the line being read
  std::string handle;                        // the read's recall handle, once a run is hidden
  auto end_run = [&](std::size_t at) {
    const std::string_view run = read.substr(run_start, at - run_start);
    if (run.size() > run_bytes_) {
      if (recall_) {  // "[t1a2b3c4d:6-17 as in an earlier output]": the range gives the count
        if (handle.empty()) handle = recall_handle(read);
        // The run ends at the line before the one being read (or at the last).
        const std::size_t last = at == read.size() ? line : line - 1;
        out += "[" + recall_ref(handle, last - run_lines + 1, last).substr(1) + " as in an earlier output]\n";
      } else {
        out += "[" + std::to_string(run_lines) + " lines as in an earlier output]\n";
      }
    } else
      out += run;
    run_lines = 0;
  };
  std::size_t start = 0;
  while (start < read.size()) {
    const std::size_t nl = read.find('\n', start);
    const std::size_t end = nl == std::string_view::npos ? read.size() : nl + 1;
    const std::uint64_t key = copy_line_key(read.substr(start, end - start), line_chars_);
    ++line;
    if (key != 0 && seen_.contains(key)) {
      if (run_lines++ == 0) run_start = start;
    } else {
      if (run_lines > 0) end_run(start);
      out += read.substr(start, end - start);
    }
    if (key != 0) mine.push_back(key);
    start = end;
  }
  if (run_lines > 0) end_run(read.size());
  seen_.insert(mine.begin(), mine.end());
  return out;
}

}  // namespace td::pruning
