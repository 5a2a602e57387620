#include "pruning/strategies/recap.hpp"

#include <algorithm>
#include <string_view>

#include "pruning/loss_cap.hpp"
#include "pruning/recall_span.hpp"
#include "pruning/snip.hpp"
#include "pruning/strategies/common.hpp"
#include "pruning/strategies/completed_tasks.hpp"
#include "pruning/strategies/recap_turn_line.hpp"
#include "pruning/strategies/working_memory.hpp"
#include "pruning/text.hpp"
#include "pruning/text_hash.hpp"

namespace td::pruning {

namespace {

// Tokens reserved for the header line within the budget.
constexpr std::uint64_t kHeaderTokens = 96;

// The first message a recap may replace: after the system messages and the
// first user message (the task), and the tool results answering it. 0: none.
std::uint32_t recap_start(const Conversation& conv) {
  const auto& msgs = conv.messages;
  const auto size = static_cast<std::uint32_t>(msgs.size());
  std::uint32_t i = 0;
  while (i < size && detail::is_system(msgs[i])) ++i;
  if (i == size || msgs[i].role != Role::User || is_tool_message(msgs[i])) return 0;
  ++i;
  while (i < size && is_tool_message(msgs[i])) ++i;
  return i;
}

struct Line {
  std::uint32_t first = 0;  // the message where its turn's part in the recap starts
  std::uint32_t end = 0;    // where that part ends
  std::string text;
  std::uint64_t tokens = 0;
};

// The memo key of turn `turn`'s line over messages [from, to): everything
// turn_line() reads of them (roles, the removed and system marks, each part's
// kind, id, name, error flag and text hash) and the options it takes.
memo_detail::Key turn_line_key(const Conversation& conv, const RecapOptions& p, std::uint32_t turn, std::uint32_t from,
                               std::uint32_t to) {
  std::vector<std::uint64_t> words{turn, p.recap_items, p.recap_text_bytes};
  for (std::uint32_t i = from; i < to; ++i) {
    const Message& m = conv.messages[i];
    words.push_back(static_cast<std::uint64_t>(m.role) | std::uint64_t{m.removed} << 8 |
                    std::uint64_t{detail::is_system(m)} << 9 | std::uint64_t{m.parts.size()} << 16);
    for (const Part& part : m.parts) {
      const tok::Hash128 h = text_hash(part);
      words.push_back(h.lo);
      words.push_back(h.hi);
      words.push_back(static_cast<std::uint64_t>(part.kind) | std::uint64_t{part.is_error} << 8);
      words.push_back(
          tok::hash_bytes(part.id.data(), part.id.size(), tok::hash_bytes(part.name.data(), part.name.size(), 0)));
    }
  }
  return memo_detail::key_of(memo_salt("recap-turn-line", {}),
                             tok::hash128(words.data(), words.size() * sizeof(std::uint64_t)));
}

// The turn lines of every turn from `start` to `end`, oldest first.
std::vector<Line> turn_lines(const Conversation& conv, const RecapOptions& p, const WorkingMemory& wm,
                             std::uint32_t start, std::uint32_t end, const Tally& tally, Memo<std::string>* memo) {
  std::vector<Line> out;
  const auto size = static_cast<std::uint32_t>(conv.messages.size());
  for (std::uint32_t t = 0; t < wm.turns(); ++t) {
    const std::uint32_t from = std::max(wm.start_of(t, size), start), to = std::min(wm.start_of(t + 1, size), end);
    if (from >= to) continue;
    Line l{from, to, {}, 0};
    if (!memo) {
      l.text = turn_line(conv, p, t, from, to);
    } else {
      const memo_detail::Key key = turn_line_key(conv, p, t, from, to);
      if (auto hit = memo->find(key)) {
        l.text = **hit;
      } else {
        l.text = turn_line(conv, p, t, from, to);
        memo->insert(key, std::make_shared<const std::string>(l.text));
      }
    }
    if (l.text.empty()) continue;
    l.tokens = tally.text(l.text);
    out.push_back(std::move(l));
  }
  return out;
}

// Turn lines built ahead on each request past half the threshold: more
// than the turns a request adds, so that the first recap finds them built.
constexpr std::uint32_t kWarmTurns = 4;

// Builds into `memo` the lines of up to kWarmTurns turns it does not hold,
// oldest first: the first recap request would otherwise build every turn's
// line at once. Every turn but the last, which later requests may extend:
// the keys are those turn_lines() asks for once the grid reaches past it.
void warm_turn_lines(const Conversation& conv, const RecapOptions& p, Memo<std::string>& memo) {
  const std::uint32_t start = recap_start(conv);
  const WorkingMemory wm = working_memory(conv, p);
  if (start == 0) return;
  const auto size = static_cast<std::uint32_t>(conv.messages.size());
  std::uint32_t built = 0;
  for (std::uint32_t t = 0; t + 1 < wm.turns() && built < kWarmTurns; ++t) {
    const std::uint32_t from = std::max(wm.start_of(t, size), start), to = wm.start_of(t + 1, size);
    if (from >= to) continue;
    const memo_detail::Key key = turn_line_key(conv, p, t, from, to);
    if (memo.find(key)) continue;
    memo.insert(key, std::make_shared<const std::string>(turn_line(conv, p, t, from, to)));
    ++built;
  }
}

// How many of the newest lines ending at or before `end` fit the budget,
// and their tokens.
struct Fit {
  std::size_t first = 0, last = 0;  // lines [first, last)
  std::uint64_t tokens = 0;
};
Fit fit(const std::vector<Line>& lines, std::uint32_t end, std::uint64_t budget) {
  Fit f;
  while (f.last < lines.size() && lines[f.last].end <= end) ++f.last;
  f.first = f.last;
  const std::uint64_t room = budget > kHeaderTokens ? budget - kHeaderTokens : 0;
  while (f.first > 0 && f.tokens + lines[f.first - 1].tokens <= room) f.tokens += lines[--f.first].tokens;
  return f;
}

// `ref`: the replaced span's recall_ref() ("" without recall).
std::string render_header(const Conversation& conv, const WorkingMemory& wm, const Fit& f, std::uint32_t start,
                          std::uint32_t end, std::string_view ref) {
  const auto size = static_cast<std::uint32_t>(conv.messages.size());
  std::uint32_t first_turn = 0, last_turn = 0;
  for (std::uint32_t t = 0; t < wm.turns(); ++t) {
    if (wm.start_of(t + 1, size) <= start) first_turn = t + 1;
    if (wm.start_of(t, size) < end) last_turn = t;
  }
  std::string out(kRecapMarker);
  out += "turns " + std::to_string(first_turn + 1) + "-" + std::to_string(last_turn + 1) + " (messages " +
         std::to_string(start + 1) + "-" + std::to_string(end) +
         ") were replaced by this summary of what was asked, concluded, read, written, run and failed";
  if (f.first > 0)
    out += "; the oldest " + text::count_noun(f.first, "turn line", "turn lines") + " left out for length";
  out += ". Re-read files or re-run commands for details.";
  out += ref;
  out += "]\n";
  return out;
}

void hash_into(std::vector<std::uint64_t>& words, std::string_view s) {
  const tok::Hash128 h = tok::hash128(s.data(), s.size());
  words.push_back(h.lo);
  words.push_back(h.hi);
}

// The history as each earlier request sent it, without the recap: before
// that request's stale frontier the plan's forms, after it the messages as
// the client sent them (`as_sent`, the diet without semantic mode; null: as
// the client sent them throughout). Prefix sums, so each ask is O(log n).
class AsSent {
 public:
  AsSent(const std::vector<std::uint64_t>& orig, const DietWithout* as_sent) {
    const std::size_t n = orig.size();
    orig_ps_.assign(n + 1, 0);
    planned_ps_.assign(n + 1, 0);
    replaced_orig_ps_.assign(n + 1, 0);
    replaced_planned_ps_.assign(n + 1, 0);
    const bool planned = as_sent && as_sent->planned.size() == n && as_sent->frontier.size() == as_sent->ends.size();
    if (planned) {
      ends_ = &as_sent->ends;
      frontiers_ = &as_sent->frontier;
      held_ = &as_sent->held;
    }
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t p = planned ? as_sent->planned[i] : orig[i];
      orig_ps_[i + 1] = orig_ps_[i] + orig[i];
      planned_ps_[i + 1] = planned_ps_[i] + p;
    }
  }
  // Marks which messages a recap replaces (its range's system messages stay).
  void replaceable(const Conversation& conv, const std::vector<std::uint64_t>& orig, std::uint32_t start) {
    for (std::size_t i = 0; i < orig.size(); ++i) {
      const bool replaced = i >= start && !detail::is_system(conv.messages[i]);
      replaced_orig_ps_[i + 1] = replaced_orig_ps_[i] + (replaced ? orig[i] : 0);
      replaced_planned_ps_[i + 1] = replaced_planned_ps_[i] + (replaced ? planned_ps_[i + 1] - planned_ps_[i] : 0);
    }
  }
  // The stale frontier the request ending at `at` left (0: none known).
  std::uint32_t frontier(std::uint32_t at) const {
    if (!ends_) return 0;
    const auto it = std::lower_bound(ends_->begin(), ends_->end(), at);
    if (it == ends_->end() || *it != at) return 0;
    return std::min((*frontiers_)[static_cast<std::size_t>(it - ends_->begin())], at);
  }
  // The largest request of the session so far as sent (with its stale
  // frontier's forms, a request can be smaller than an earlier one).
  std::uint64_t largest(std::uint32_t size) const {
    if (!ends_) return prefix(size, 0);
    std::uint64_t most = 0;
    for (std::uint32_t end : *ends_) most = std::max(most, prefix(end, frontier(end)));
    return most;
  }
  // Tokens of messages [0, end) as a request with `frontier` sent them.
  std::uint64_t prefix(std::uint32_t end, std::uint32_t frontier) const {
    const std::uint32_t f = std::min(frontier, end);
    return planned_ps_[f] + orig_ps_[end] - orig_ps_[f] + held_extra(end, frontier);
  }
  // Tokens a recap of [start, cut) takes out of a request with `frontier`.
  std::uint64_t replaced(std::uint32_t start, std::uint32_t cut, std::uint32_t frontier) const {
    const std::uint32_t m = std::clamp(frontier, start, cut);
    return replaced_planned_ps_[m] - replaced_planned_ps_[start] + replaced_orig_ps_[cut] - replaced_orig_ps_[m] +
           held_extra(m, frontier) - held_extra(start, frontier);
  }

 private:
  // What the reads still held whole add to [0, end) (pruning/held_forms.hpp).
  std::uint64_t held_extra(std::uint32_t end, std::uint32_t frontier) const {
    return held_ ? held_->extra(end, frontier) : 0;
  }
  const std::vector<std::uint32_t>* ends_ = nullptr;
  const std::vector<std::uint32_t>* frontiers_ = nullptr;
  const HeldForms* held_ = nullptr;
  std::vector<std::uint64_t> orig_ps_, planned_ps_, replaced_orig_ps_, replaced_planned_ps_;
};

}  // namespace

RecapPlan recap_plan(const Conversation& conv, const RecapOptions& opt, const std::vector<std::uint64_t>& orig,
                     std::uint64_t fixed, std::uint64_t context_window, const Tally& tally,
                     Memo<std::string>* line_memo, Memo<RecallSpan>* spans, const DietWithout* as_sent) {
  RecapPlan plan;
  const auto size = static_cast<std::uint32_t>(conv.messages.size());
  if (!opt.recap) return plan;
  AsSent sent_by(orig, as_sent);
  // No request of the session so far over either: no recap (the largest,
  // not this one, since a frontier step makes a request smaller than the
  // one before it, and a recap once made must stay).
  const std::uint64_t total = fixed + sent_by.largest(size);
  const bool overflows = context_window && total > context_window;
  if (total <= opt.token_threshold && !overflows) {
    // Half-way to the threshold, the turns' lines are built a few a request.
    if (line_memo && total > opt.token_threshold / 2) warm_turn_lines(conv, opt, *line_memo);
    return plan;
  }
  const std::uint32_t start = recap_start(conv);
  const WorkingMemory wm = working_memory(conv, opt);
  if (start == 0 || wm.grid.empty()) return plan;
  const std::uint32_t reach = wm.start_of(wm.grid.back(), size);
  if (reach <= start + 1) return plan;
  const std::vector<Line> lines = turn_lines(conv, opt, wm, start, reach, tally, line_memo);
  sent_by.replaceable(conv, orig, start);

  // Prefix sums of the tokens as the client sent them, and a plan for the
  // loss cap: each turn's line where its part starts (an overestimate: the
  // budget may drop some).
  std::vector<std::uint64_t> orig_ps(size + 1, 0), plan_ps(size + 1, 0);
  std::vector<std::uint64_t> planned(orig);
  for (std::uint32_t i = start; i < reach; ++i)
    if (!detail::is_system(conv.messages[i])) planned[i] = 0;
  planned[start] += kHeaderTokens;
  for (const Line& l : lines) planned[l.first] += l.tokens;
  for (std::uint32_t i = 0; i < size; ++i) {
    orig_ps[i + 1] = orig_ps[i] + orig[i];
    plan_ps[i + 1] = plan_ps[i] + planned[i];
  }
  // The request holding [0, at) with the recap up to `cut` (0: none), as
  // sent: the messages before that request's stale frontier in their pruned
  // forms (docs/design.md §Policy, Standard's recap).
  auto sent = [&](std::uint32_t cut, std::uint32_t at) {
    const std::uint32_t frontier = sent_by.frontier(at);
    std::uint64_t s = fixed + sent_by.prefix(at, frontier);
    if (cut)
      s = s - sent_by.replaced(start, cut, frontier) + kHeaderTokens + fit(lines, cut, opt.recap_budget_tokens).tokens;
    return s;
  };
  LossCap cap(conv, opt, orig_ps, plan_ps);
  std::uint32_t cut = 0;
  for (std::uint32_t at : cap.request_ends()) {
    const std::uint64_t now = sent(cut, at);
    const bool must = context_window && now > context_window;  // it would not fit otherwise
    if (now <= opt.token_threshold && !must) continue;
    // The furthest grid point that request allowed.
    std::size_t k = 0;
    while (k < wm.grid.size() && wm.grid_eligible_end[k] <= at) ++k;
    if (k == 0) continue;
    const std::uint32_t g = wm.grid[k - 1], to = wm.start_of(g, size);
    if (to <= std::max(cut, start + 1)) continue;
    const std::uint64_t then = sent(to, at);
    const std::uint64_t saved = now > then ? now - then : 0;
    if (!must) {
      if (saved == 0 || saved < opt.clear_at_least_tokens) continue;
      // Rewritten: everything from the recap on; cached before: the same span as it was sent.
      const std::uint64_t head = fixed + sent_by.prefix(start, sent_by.frontier(at));
      const double rewritten = double(then - head);
      const double was_cached = double(now - head);
      if (!pays_back(opt, saved, rewritten, was_cached, g) || !cap.allows(start, to, at)) continue;
    }
    cap.take(start, to, at);
    cut = to;
    plan.stepped = at == size;
  }
  if (cut == 0) return plan;
  plan.start = start;
  plan.end = cut;
  const Fit f = fit(lines, cut, opt.recap_budget_tokens);
  std::string ref;
  if (opt.recall) {  // the span as sent: a function of the history, like the cut
    const std::shared_ptr<const RecallSpan> span = recall_span(conv, start, cut, spans);
    plan.span = span->text;
    ref = recall_ref(span->handle);
  }
  plan.header = render_header(conv, wm, f, start, cut, ref);
  plan.text = plan.header;
  for (std::size_t k = f.first; k < f.last; ++k) plan.text += lines[k].text;
  plan.prefix_hash = recap_prefix_hash(conv, cut);
  return plan;
}

std::uint64_t recap_prefix_hash(const Conversation& conv, std::uint32_t end) {
  std::vector<std::uint64_t> words;
  for (std::uint32_t i = 0; i < end && i < conv.messages.size(); ++i) {
    const Message& m = conv.messages[i];
    words.push_back(static_cast<std::uint64_t>(m.role) << 1 | (m.system_field ? 1 : 0));
    hash_into(words, m.name);
    for (const Part& p : m.parts) {
      words.push_back(static_cast<std::uint64_t>(p.kind) << 32 | p.opaque_bytes);
      const tok::Hash128 t = text_hash(p);
      words.push_back(t.lo);
      words.push_back(t.hi);
      hash_into(words, p.id);
      hash_into(words, p.name);
    }
  }
  return tok::hash128(words.data(), words.size() * sizeof(std::uint64_t)).lo;
}

StrategyStats recap(Conversation& conv, const RecapPlan& plan, const RecapSummaries* summaries, bool* summary_missing) {
  StrategyStats st{.name = "recap"};
  if (plan.end == 0) return st;
  auto& msgs = conv.messages;
  std::uint64_t bytes = 0;
  for (std::uint32_t i = plan.start; i < plan.end && i < msgs.size(); ++i) {
    Message& m = msgs[i];
    if (detail::is_system(m) || m.removed) continue;
    for (const Part& p : m.parts) bytes += p.text.size() + p.opaque_bytes;
    remove_message(m);
    ++st.hits;
  }
  Message note;
  note.role = Role::User;
  note.changed = true;
  Part p;
  std::optional<std::string> summary;
  if (summaries && *summaries) summary = (*summaries)(plan.prefix_hash);
  if (summary_missing) *summary_missing = summaries && *summaries && !summary;
  // A summary ends with a newline like the extractive lines do.
  if (summary && !summary->empty())
    p.text = plan.header + *summary + (summary->back() == '\n' ? "" : "\n");
  else
    p.text = plan.text;
  p.edited = true;
  if (plan.span) p.hidden.push_back(plan.span);
  note.parts.push_back(std::move(p));
  const std::size_t written = note.parts.front().text.size();
  msgs.insert(msgs.begin() + plan.start, std::move(note));
  st.bytes_saved = bytes > written ? bytes - written : 0;
  return st;
}

}  // namespace td::pruning
