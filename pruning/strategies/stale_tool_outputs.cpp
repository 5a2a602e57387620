#include "pruning/strategies/stale_tool_outputs.hpp"

#include <array>
#include <vector>

#include "pruning/strategies/common.hpp"
#include "pruning/text.hpp"

namespace td::pruning {

namespace {

// Keywords, matched case-sensitively as they appear in compiler, test-runner
// and shell output (lower-case "error" catches "error:" and "errors").
constexpr std::array<std::string_view, 14> kErrorWords = {
    "error",  "Error", "ERROR",   "Traceback", "Exception", "FAILED", "FAIL:",
    "failed", "fatal", "Fatal",   "panic",     "assert",    "Assert", "No such file"};

std::string hidden_notice(std::size_t lines, std::size_t bytes) {
  return "[... " + text::count_noun(lines, "line", "lines") + " (" + std::to_string(bytes) +
         " bytes) hidden ...]\n";
}

}  // namespace

bool is_error_line(std::string_view line) {
  for (std::string_view w : kErrorWords)
    if (line.find(w) != std::string_view::npos) return true;
  return false;
}

std::string snip_text(std::string_view text, std::uint64_t head_bytes, std::uint64_t tail_bytes,
                      std::uint32_t max_error_lines) {
  std::vector<std::string_view> ls = text::lines(text);
  const std::size_t n = ls.size();

  // Head: whole lines within the budget; a first line over it is cut inside.
  std::size_t head_lines = 0, head_len = 0;
  while (head_lines < n && head_len + ls[head_lines].size() <= head_bytes) head_len += ls[head_lines++].size();
  std::size_t head_cut = head_len;  // bytes of text kept at the start
  if (head_lines == 0 && n > 0) head_cut = text::floor_boundary(text, head_bytes);

  // Tail: whole lines within the budget, not overlapping the head.
  std::size_t tail_lines = 0, tail_len = 0;
  while (tail_lines + head_lines < n && tail_len + ls[n - 1 - tail_lines].size() <= tail_bytes)
    tail_len += ls[n - 1 - tail_lines++].size();
  std::size_t tail_cut = text.size() - tail_len;  // first byte of text kept at the end
  if (tail_lines == 0 && head_lines < n) {
    std::size_t want = text.size() > tail_bytes ? text.size() - tail_bytes : 0;
    tail_cut = std::max(text::ceil_boundary(text, want), head_cut);
  }
  if (tail_cut <= head_cut) return std::string{text};

  // The middle, [head_cut, tail_cut): keep error lines, hide the rest.
  std::string out{text.substr(0, head_cut)};
  if (!out.empty() && out.back() != '\n') out += '\n';
  std::string_view middle = text.substr(head_cut, tail_cut - head_cut);
  std::size_t gap_lines = 0, gap_bytes = 0, errors = 0;
  for (std::string_view line : text::lines(middle)) {
    if (errors < max_error_lines && line.size() <= 512 && line.back() == '\n' && is_error_line(line)) {
      if (gap_lines > 0) out += hidden_notice(gap_lines, gap_bytes);
      gap_lines = gap_bytes = 0;
      out += line;
      ++errors;
    } else {
      ++gap_lines;
      gap_bytes += line.size();
    }
  }
  if (gap_lines > 0) out += hidden_notice(gap_lines, gap_bytes);
  out += text.substr(tail_cut);
  if (out.size() >= text.size()) return std::string{text};
  return out;
}

StrategyStats snip_stale_tool_outputs(Conversation& conv, const Profile& profile, std::uint32_t limit) {
  StrategyStats st{.name = "stale_tool_outputs"};
  if (!profile.snip_stale_outputs) return st;
  auto& msgs = conv.messages;
  if (limit > msgs.size()) limit = static_cast<std::uint32_t>(msgs.size());
  detail::ToolNames names;
  for (std::uint32_t i = 0; i < limit; ++i) {
    Message& m = msgs[i];
    names.learn(m);
    if (m.removed) continue;
    for (Part& p : m.parts) {
      if (p.kind != PartKind::ToolResult || !p.editable) continue;
      if (p.text.size() < profile.snippet_threshold_bytes) continue;
      if (detail::excluded_tool(profile, names.of_result(p))) continue;
      std::string cut = snip_text(p.text, profile.snippet_head_bytes, profile.snippet_tail_bytes,
                                  profile.snippet_error_lines);
      if (cut.size() >= p.text.size()) continue;
      st.add(p.text.size(), cut.size());
      set_text(m, p, std::move(cut));
    }
  }
  return st;
}

}  // namespace td::pruning
