#include "pruning/strategies/recap_turn_line.hpp"

#include <rapidjson/document.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "pruning/snip.hpp"
#include "pruning/strategies/common.hpp"
#include "pruning/text.hpp"

namespace td::pruning {

namespace {

// `s` on one line (whitespace runs become one space), cut to `max` bytes on
// a character boundary, "..." marking a cut.
std::string one_line(std::string_view s, std::uint64_t max) {
  std::string out;
  bool space = false;
  for (char ch : s) {
    if (std::isspace(static_cast<unsigned char>(ch))) {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += ch;
    if (out.size() > max) break;
  }
  if (out.size() > max) {
    out.resize(text::floor_boundary(out, static_cast<std::size_t>(max)));
    out += "...";
  }
  return out;
}

bool contains_any(std::string_view s, std::initializer_list<std::string_view> needles) {
  for (std::string_view n : needles)
    if (s.find(n) != std::string_view::npos) return true;
  return false;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

// A list that keeps first appearances and at most `max` of them, counting the rest.
struct Names {
  std::vector<std::string> items;
  std::uint32_t more = 0;
  void add(std::string_view s, std::uint32_t max) {
    if (s.empty() || std::find(items.begin(), items.end(), s) != items.end()) return;
    if (items.size() < max)
      items.emplace_back(s);
    else
      ++more;
  }
  std::string joined(std::string_view sep) const {
    std::string out;
    for (const auto& s : items) out += (out.empty() ? "" : std::string(sep)) + s;
    if (more) out += " (+" + std::to_string(more) + " more)";
    return out;
  }
};

// What one tool call says: its command line and the paths it names.
struct CallFacts {
  std::string command;
  std::vector<std::string> paths;
  bool writes = false;
};

constexpr std::array<std::string_view, 10> kPathKeys = {"path",     "file_path",     "filePath",      "file",
                                                        "filename", "absolute_path", "notebook_path", "target_file",
                                                        "dir_path", "directory"};

void patch_paths(std::string_view s, CallFacts& f) {
  if (text::find(s, "*** ") == std::string_view::npos) return;  // no patch header: no line to split
  for (std::string_view line : text::lines(s)) {
    line = text::chomp(line);
    for (std::string_view head : {"*** Update File: ", "*** Add File: ", "*** Delete File: "})
      if (line.starts_with(head)) {
        f.paths.emplace_back(line.substr(head.size()));
        f.writes = true;
      }
  }
}

CallFacts call_facts(const Part& call) {
  CallFacts f;
  const std::string name = lower(call.name);
  f.writes = contains_any(name, {"write", "edit", "create", "replace", "patch", "insert", "notebook"});
  rapidjson::Document d;
  d.Parse<rapidjson::kParseIterativeFlag>(call.text.data(), call.text.size());
  if (!d.HasParseError() && d.IsObject()) {
    for (auto& m : d.GetObject()) {
      const std::string_view key(m.name.GetString(), m.name.GetStringLength());
      if (m.value.IsString()) {
        const std::string_view v(m.value.GetString(), m.value.GetStringLength());
        if (key == "command" || key == "cmd")
          f.command = v;
        else if (std::find(kPathKeys.begin(), kPathKeys.end(), key) != kPathKeys.end())
          f.paths.emplace_back(v);
        else
          patch_paths(v, f);
      } else if (m.value.IsArray() && (key == "command" || key == "cmd")) {
        // Codex: ["bash", "-lc", "<script>"]: the script is the command.
        for (auto& e : m.value.GetArray())
          if (e.IsString()) f.command = std::string(e.GetString(), e.GetStringLength());
      }
    }
  }
  if (!f.command.empty()) {
    const std::string_view first = text::chomp(text::lines(f.command).front());
    if (contains_any(first, {"sed -i", "> ", ">>", "tee ", "str_replace", "insert ", "create ", "edit ", "apply_patch",
                             "git apply", "patch ", "touch ", "mv ", "cp ", "rm "}))
      f.writes = true;
    for (std::string_view n : names_in(first))
      if (is_path_name(n)) f.paths.emplace_back(n);
    patch_paths(f.command, f);
  }
  return f;
}

// The exit status a tool result reports ("exit 1"), "error" if the provider
// flagged it, else "".
std::string exit_status(const Part& result) {
  std::string_view t = result.text;
  for (std::string_view head :
       {"<returncode>", "Process exited with code ", "Exit code: ", "exit code ", "Exit code ", "exit status "}) {
    const auto at = text::find(t, head);
    if (at == std::string_view::npos) continue;
    std::size_t i = at + head.size(), j = i;
    if (j < t.size() && t[j] == '-') ++j;
    while (j < t.size() && std::isdigit(static_cast<unsigned char>(t[j]))) ++j;
    if (j > i) return "exit " + std::string(t.substr(i, j - i));
  }
  return result.is_error ? "error" : "";
}

}  // namespace

std::string turn_line(const Conversation& conv, const RecapOptions& p, std::uint32_t turn, std::uint32_t from,
                      std::uint32_t to) {
  const auto& msgs = conv.messages;
  const std::uint32_t max = p.recap_items;
  std::string asked, concluded;
  Names read, wrote, ran, errors;
  // The turn's tool results by id, in order, with their messages: a call
  // finds its own without a scan of the turn (Codex turns hold hundreds).
  std::unordered_map<std::string_view, std::vector<std::pair<std::uint32_t, const Part*>>> results;
  for (std::uint32_t j = from; j < to; ++j)
    for (const Part& r : msgs[j].parts)
      if (r.kind == PartKind::ToolResult) results[r.id].emplace_back(j, &r);
  for (std::uint32_t i = from; i < to; ++i) {
    const Message& m = msgs[i];
    if (detail::is_system(m) || m.removed) continue;
    if (m.role == Role::User && !is_tool_message(m)) {
      for (const Part& part : m.parts)
        if (part.kind == PartKind::Text && asked.empty()) asked = one_line(part.text, p.recap_text_bytes);
    }
    if (m.role == Role::Assistant) {
      for (const Part& part : m.parts)
        if (part.kind == PartKind::Text && part.text.find_first_not_of(" \t\r\n") != std::string::npos)
          concluded = one_line(part.text, p.recap_text_bytes);
    }
    for (const Part& part : m.parts) {
      if (part.kind == PartKind::ToolCall) {
        const CallFacts f = call_facts(part);
        for (const std::string& path : f.paths) (f.writes ? wrote : read).add(path, max);
        std::string cmd = f.command.empty() ? "" : "`" + one_line(f.command, p.recap_text_bytes / 2) + "`";
        // The result answering it, in the same turn: the first later
        // message with a result of its id that reports a status (the last
        // such result of that message).
        std::string status;
        if (const auto it = results.find(part.id); it != results.end())
          for (std::size_t k = 0; k < it->second.size() && status.empty();) {
            const std::uint32_t j = it->second[k].first;
            for (; k < it->second.size() && it->second[k].first == j; ++k)
              if (j > i) status = exit_status(*it->second[k].second);
          }
        if (cmd.empty() && !status.empty()) cmd = part.name;
        if (!cmd.empty()) ran.add(status.empty() ? cmd : cmd + " (" + status + ")", max);
      } else if (part.kind == PartKind::ToolResult || (m.role == Role::Tool && part.kind == PartKind::Text)) {
        // Its error lines, in order: one search over the text (no error
        // word spans a '\n'), then the line around each hit.
        const std::string_view t = part.text;
        for (std::size_t at = next_error_word(t, 0); at != std::string_view::npos;) {
          const std::size_t nl = t.rfind('\n', at), begin = nl == std::string_view::npos ? 0 : nl + 1;
          const std::size_t end = std::min(t.find('\n', at), t.size());
          errors.add(one_line(text::chomp(t.substr(begin, end - begin)), p.recap_text_bytes / 2), max);
          at = end < t.size() ? next_error_word(t, end + 1) : std::string_view::npos;
        }
      }
    }
  }
  std::string out;
  auto field = [&](std::string_view label, const std::string& value) {
    if (value.empty()) return;
    out += (out.empty() ? "" : " | ") + std::string(label) + value;
  };
  field("asked: ", asked);
  field("concluded: ", concluded);
  field("read: ", read.joined(", "));
  field("wrote: ", wrote.joined(", "));
  field("ran: ", ran.joined("; "));
  field("errors: ", errors.joined("; "));
  if (out.empty()) return out;
  return "turn " + std::to_string(turn + 1) + ": " + out + "\n";
}

}  // namespace td::pruning
