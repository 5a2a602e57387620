#include "pruning/strategies/copied_lines.hpp"

#include <algorithm>

#include <rapidjson/document.h>

#include "pruning/json_nesting.hpp"
#include "pruning/snip.hpp"
#include "pruning/strategies/working_memory.hpp"
#include "pruning/text.hpp"

namespace td::pruning {

namespace {

void collect_strings(const rapidjson::Value& v, std::string& out) {
  if (v.IsString()) {
    out.append(v.GetString(), v.GetStringLength());
    out += '\n';
  } else if (v.IsArray()) {
    for (const auto& e : v.GetArray()) collect_strings(e, out);
  } else if (v.IsObject()) {
    for (const auto& m : v.GetObject()) collect_strings(m.value, out);
  }
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The keys of the lines of `p`'s line_text(), through `memo` when there is
// one; with `views` (a tool output's lines), each line's copy_view() too.
std::shared_ptr<const LineKeys> line_keys(const Part& p, std::uint64_t min_bytes, Memo<LineKeys>* memo, bool views) {
  const bool decoded = p.kind == PartKind::ToolCall || json_object_output(p);
  return memoized(memo, memo_salt("line_keys", {min_bytes, decoded, views}), p,
                  [&](std::string_view) -> std::optional<LineKeys> {
                    LineKeys out;
                    const std::string text = line_text(p);
                    for (std::string_view line : text::lines(text)) {
                      if (const std::uint64_t k = copy_line_key(line, min_bytes)) out.keys.push_back(k);
                      if (!views) continue;
                      const std::string_view view = copy_view(line);
                      if (view.size() == line.size()) continue;
                      if (const std::uint64_t k = copy_line_key(view, min_bytes)) out.keys.push_back(k);
                    }
                    if (out.keys.empty()) return std::nullopt;
                    return out;
                  });
}

}  // namespace

std::string_view copy_view(std::string_view line) {
  std::size_t i = 0;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  // A diff's mark: the line it adds or removes (not a file header).
  if (i < line.size() && (line[i] == '+' || line[i] == '-')) {
    if (line.substr(i).starts_with("+++") || line.substr(i).starts_with("---")) return line;
    return line.substr(i + 1);
  }
  // grep -rn's path before the number: a run without blanks ending in ':'.
  std::size_t at = i;
  if (at < line.size() && !is_digit(line[at])) {
    const std::size_t colon = line.find(':', at);
    if (colon == std::string_view::npos || colon == at || colon + 1 >= line.size() || !is_digit(line[colon + 1]))
      return line;
    for (std::size_t k = at; k < colon; ++k)
      if (line[k] == ' ' || line[k] == '\t') return line;
    at = colon + 1;
  }
  std::size_t end = at;
  while (end < line.size() && is_digit(line[end])) ++end;
  if (end == at || end - at > 9 || end >= line.size()) return line;
  if (line[end] == ':' || line[end] == '\t') return line.substr(end + 1);
  if (line[end] == '-' && at == i) return line.substr(end + 1);  // grep's context line, never after a path
  if (line.substr(end).starts_with("\u2192")) return line.substr(end + 3);
  return line;
}

bool json_object_output(const Part& p) {
  if (p.kind != PartKind::ToolResult) return false;
  const std::string_view t(p.text);
  const std::size_t first = t.find_first_not_of(" \t\r\n"), last = t.find_last_not_of(" \t\r\n");
  return first != std::string_view::npos && last > first && t[first] == '{' && t[last] == '}';
}

std::string line_text(const Part& p) {
  const bool output = json_object_output(p);
  if (p.kind != PartKind::ToolCall && !output) return p.text;
  if (!json_nesting_within(p.text)) return output ? std::string(p.text) : std::string{};
  rapidjson::Document d;
  d.Parse<rapidjson::kParseStopWhenDoneFlag>(p.text.data(), p.text.size());
  if (d.HasParseError()) return output ? std::string(p.text) : std::string{};
  std::string out;
  collect_strings(d, out);
  return out;
}

CopiedLines::CopiedLines(const Conversation& conv, std::uint32_t limit, std::uint64_t min_bytes, Memo<LineKeys>* memo)
    : min_bytes_(min_bytes) {
  if (min_bytes == 0) return;
  limit = std::min<std::uint32_t>(limit, static_cast<std::uint32_t>(conv.messages.size()));
  in_tool_outputs_.reserve(4096);
  for (std::uint32_t i = 0; i < limit; ++i) {
    const Message& m = conv.messages[i];
    if (is_tool_message(m)) {
      for (const Part& p : m.parts) {
        if (p.kind != PartKind::ToolResult && p.kind != PartKind::Text) continue;
        if (const auto keys = line_keys(p, min_bytes, memo, true))
          in_tool_outputs_.insert(keys->keys.begin(), keys->keys.end());
      }
    } else if (m.role == Role::Assistant && !in_tool_outputs_.empty()) {
      for (const Part& p : m.parts) {
        if (p.kind != PartKind::Text && p.kind != PartKind::ToolCall) continue;
        if (p.text.size() < min_bytes) continue;  // no line of it is long enough
        const auto keys = line_keys(p, min_bytes, memo, false);
        if (!keys) continue;
        for (const std::uint64_t k : keys->keys) {
          if (!in_tool_outputs_.count(k) || !keeper_.emplace(k, i).second) continue;
          if (keepers_.empty() || keepers_.back() != i) keepers_.push_back(i);
        }
      }
    }
  }
}

bool CopiedLines::keeps_any(std::uint32_t at) const { return std::binary_search(keepers_.begin(), keepers_.end(), at); }

std::vector<std::uint64_t> CopiedLines::kept_by(std::string_view text, std::uint32_t at) const {
  std::vector<std::uint64_t> out;
  if (!keeps_any(at)) return out;
  for (std::string_view line : text::lines(text)) {
    const std::uint64_t k = copy_line_key(line, min_bytes_);
    if (k == 0) continue;
    auto it = keeper_.find(k);
    if (it != keeper_.end() && it->second == at) out.push_back(k);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace td::pruning
