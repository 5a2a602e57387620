#include "cli/replay_recall_calls.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <utility>

#include "providers/recall_tool.hpp"
#include "pruning/snip.hpp"
#include "pruning/text.hpp"

namespace td::cli {

namespace {

bool is_word(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '-';
}

// What the request's notices name of the text with `handle`: the hidden line
// ranges (" t1a2b3c4d:40-380", " t1a2b3c4d:7") and whether one names it
// whole (" t1a2b3c4d" alone).
struct Named {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> gaps;
  bool whole = false;
};

Named named(std::string_view sent, std::string_view handle) {
  Named out;
  for (std::size_t at = sent.find(handle); at != std::string_view::npos; at = sent.find(handle, at + 1)) {
    if (at > 0 && is_word(sent[at - 1])) continue;
    std::size_t i = at + handle.size();
    auto digit = [&](std::size_t k) { return k < sent.size() && sent[k] >= '0' && sent[k] <= '9'; };
    auto number = [&]() {
      std::uint32_t v = 0;
      while (digit(i) && v < (1u << 24)) v = v * 10 + std::uint32_t(sent[i++] - '0');
      return v;
    };
    if (i < sent.size() && sent[i] == ':' && digit(i + 1)) {
      ++i;
      const std::uint32_t a = number();
      std::uint32_t b = a;
      if (i < sent.size() && sent[i] == '-' && digit(i + 1)) {
        ++i;
        b = number();
      }
      if (a > 0 && b >= a) out.gaps.emplace_back(a, b);
    } else if (i >= sent.size() || !is_word(sent[i])) {
      out.whole = true;
    }
  }
  return out;
}

struct Ask {
  providers::RecallArgs args;
  std::vector<std::size_t> items;  // the items it is asked for
};

}  // namespace

std::vector<RecallCall> recall_calls(std::string_view text, std::string_view sent_text,
                                     const std::unordered_set<std::string_view>& sent_lines,
                                     const std::vector<std::string>& items, const RecallAsk& ask,
                                     std::vector<std::size_t>& shown_by) {
  constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  shown_by.assign(items.size(), kNone);
  std::vector<RecallCall> calls;
  const std::string handle = pruning::recall_handle(text);
  const Named names = named(sent_text, handle);
  const std::vector<std::string_view> lines = pruning::text::lines(text);
  const auto n = static_cast<std::uint32_t>(lines.size());

  // Each item's line: the first holding it inside a named gap, else the
  // first holding it at all (asked whole when a notice names the text).
  std::map<std::size_t, std::vector<std::pair<std::uint32_t, std::size_t>>> by_gap;  // gap -> (line, item)
  std::vector<std::size_t> whole, unnamed;
  for (std::size_t i = 0; i < items.size(); ++i) {
    bool any = false, placed = false;
    for (std::uint32_t l = 1; l <= n && !placed; ++l) {
      if (pruning::text::chomp(lines[l - 1]).find(items[i]) == std::string_view::npos) continue;
      any = true;
      for (std::size_t g = 0; g < names.gaps.size() && !placed; ++g)
        if (l >= names.gaps[g].first && l <= names.gaps[g].second) {
          by_gap[g].emplace_back(l, i);
          placed = true;
        }
    }
    if (!placed) (any && names.whole ? whole : unnamed).push_back(i);
  }

  // One call per gap: from its first needed line less the margin to its
  // last plus the margin, within the gap.
  std::vector<Ask> asks;
  const std::uint64_t m = ask.margin_lines;
  for (const auto& [g, needed] : by_gap) {
    const auto [a, b] = names.gaps[g];
    std::uint32_t lo = needed.front().first, hi = lo;
    Ask call;
    for (const auto& [l, i] : needed) {
      lo = std::min(lo, l);
      hi = std::max(hi, l);
      call.items.push_back(i);
    }
    call.args = {handle, lo > a + m ? lo - std::uint32_t(m) : a, std::uint32_t(std::min<std::uint64_t>(b, hi + m))};
    asks.push_back(std::move(call));
  }
  if (!whole.empty()) asks.push_back({{handle, 0, 0}, whole});

  // Asked by name: the proxy's answer, and the rest of a cut answer one wave later.
  const std::optional<std::string> owned{std::string(text)};
  for (std::uint32_t wave = 0; !asks.empty(); ++wave) {
    std::vector<Ask> next;
    for (const Ask& a : asks) {
      std::pair<std::uint32_t, std::uint32_t> shown{0, 0};
      std::string answer = providers::recall_result_text(a.args, owned, ask.max_answer_bytes, &shown);
      std::vector<std::size_t> missing;
      for (std::size_t i : a.items) {
        if (answer.find(items[i]) == std::string::npos)
          missing.push_back(i);
        else if (shown_by[i] == kNone)
          shown_by[i] = calls.size();
      }
      calls.push_back({wave, std::move(answer), shown.first, shown.second});
      const std::uint32_t end = a.args.last_line ? a.args.last_line : n;
      if (!missing.empty() && shown.second != 0 && shown.second < end)
        next.push_back({{handle, shown.second + 1, end}, std::move(missing)});
    }
    asks = std::move(next);
  }

  if (!unnamed.empty()) {
    std::string answer = hidden_lines(text, sent_lines, ask.max_answer_bytes);
    for (std::size_t i : unnamed)
      if (answer.find(items[i]) != std::string::npos) shown_by[i] = calls.size();
    calls.push_back({0, std::move(answer), 0, 0});
  }
  return calls;
}

std::string hidden_lines(std::string_view output, const std::unordered_set<std::string_view>& sent_lines,
                         std::size_t max_bytes) {
  std::string out;
  std::size_t start = 0;
  while (start <= output.size()) {
    std::size_t end = output.find('\n', start);
    if (end == std::string_view::npos) end = output.size();
    std::string_view line = output.substr(start, end - start);
    start = end + 1;
    if (sent_lines.count(line)) continue;
    if (out.size() + line.size() + 1 > max_bytes) {
      if (out.empty()) out = line.substr(0, pruning::text::floor_boundary(line, max_bytes));
      break;
    }
    out.append(line).push_back('\n');
  }
  return out;
}

}  // namespace td::cli
