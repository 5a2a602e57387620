#include "pruning/strategies/completed_tasks.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <unordered_map>

#include "pruning/loss_cap.hpp"
#include "pruning/strategies/common.hpp"
#include "pruning/strategies/edited_files.hpp"
#include "pruning/tasks.hpp"
#include "pruning/text.hpp"

namespace td::pruning {

namespace {

std::string with_commas(std::uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// Titles of the tasks as they were when each was completed after the call
// at `call`, one line, cut at a character boundary.
std::string title_of(const TaskHistory& h, std::span<const std::uint32_t> tasks, std::uint32_t call,
                     std::uint64_t max_bytes) {
  std::string t;
  for (std::uint32_t k : tasks) {
    if (!t.empty()) t += "; ";
    t += h.tasks[k].title_at(h.tasks[k].completed_after(call).value_or(call));
  }
  std::replace_if(
      t.begin(), t.end(), [](char c) { return c == '\n' || c == '\r' || c == '\t'; }, ' ');
  if (t.size() > max_bytes) {
    t.resize(text::floor_boundary(t, static_cast<std::size_t>(max_bytes)));
    t += "\u2026";
  }
  return t;
}

std::string json_object_with(std::string_view key, std::string_view value) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
  w.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
  w.EndObject();
  return {buf.GetString(), buf.GetSize()};
}

struct Unit {
  std::uint32_t message = 0, part = 0;
  const Part* source = nullptr;  // the output as sent: archived (copied) only if placed
  std::uint32_t completion = 0;  // where the last of its tasks was completed
  std::span<const std::uint32_t> tasks;
  std::uint64_t saved_sent = 0;  // tokens its tombstone saves on the output as sent
  std::uint64_t saved_cut = 0;   // ... on the output as the stale frontier's plan cut it
  std::uint32_t placed = ~0u;    // the request (index) that placed it; ~0u: not placed

  // What it saves in request r, whose frontier is `frontier` (a read the
  // frontier still holds is sent whole, pruning/held_forms.hpp).
  std::uint64_t saved(std::uint32_t frontier, const HeldForms& held) const {
    return message < frontier && !held.held(message, part, frontier) ? saved_cut : saved_sent;
  }
};

// Where the part of history [0, end) that semantic mode may touch ends: the
// working-memory window's grid point, before the last keep_tool_uses results.
std::uint32_t evictable_end(const Conversation& conv, const CompletedTasksOptions& p, const WorkingMemory& wm,
                            std::uint32_t end, std::uint32_t turns) {
  const std::uint32_t window = std::max<std::uint32_t>(p.window_turns, 1);
  const std::uint32_t step = std::max<std::uint32_t>(p.frontier_step_turns, 1);
  if (turns <= window) return 0;
  const std::uint32_t g = (turns - window) / step * step;
  std::uint32_t limit = g ? wm.turn_start[g] : 0;
  std::uint32_t results = 0, i = end;
  while (results < p.keep_tool_uses && i > 0)
    if (is_tool_message(conv.messages[--i])) ++results;
  if (results < p.keep_tool_uses) return 0;
  return std::min(limit, i);
}

// The session's requests, as the diet without semantic mode sent them and
// with the tombstones placed so far: tokens before a message, and each
// request's cost under prefix caching (the loss cap's model,
// pruning/loss_cap.hpp, for edits that are not a prefix).
class Session {
 public:
  Session(const CompletedTasksOptions& p, const DietWithout& w, const std::vector<std::uint64_t>& orig_ps,
          const std::vector<Unit>& units)
      : p_(p), w_(w), orig_ps_(orig_ps), units_(units), planned_ps_(orig_ps.size(), 0) {
    for (std::size_t i = 0; i < w.planned.size(); ++i) planned_ps_[i + 1] = planned_ps_[i] + w.planned[i];
  }

  // Tokens of messages [0, x) in request r without semantic mode.
  std::uint64_t base(std::uint32_t x, std::uint32_t r) const {
    const std::uint32_t f = std::min(x, w_.frontier[r]);
    return planned_ps_[f] + orig_ps_[x] - orig_ps_[f] + w_.held.extra(x, w_.frontier[r]);
  }
  // Tokens the tombstones placed by request `upto` save in [0, x) of request r.
  std::uint64_t saved(std::uint32_t x, std::uint32_t r, std::uint32_t upto) const {
    std::uint64_t s = 0;
    for (const Unit& u : units_)
      if (u.placed <= upto && u.message < x) s += u.saved(w_.frontier[r], w_.held);
    return s;
  }
  std::uint64_t sent(std::uint32_t x, std::uint32_t r, std::uint32_t upto) const {
    return base(x, r) - std::min(base(x, r), saved(x, r, upto));
  }
  // Whether request r, its new tombstones from message `first` on saving
  // `extra` more, keeps the session within the cap.
  bool allows(std::uint32_t r, std::uint32_t first, std::uint64_t extra) const {
    double without = 0, with = 0;
    costs(r, first, extra, without, with);
    return closed_with_ + with <= (1.0 + p_.max_loss) * (closed_without_ + without);
  }
  // Request r is decided (its tombstones placed, from `first` on).
  void close(std::uint32_t r, std::uint32_t first) {
    double without = 0, with = 0;
    costs(r, first, 0, without, with);
    closed_without_ += without;
    closed_with_ += with;
  }

 private:
  // The first message request r sends differently from r - 1 without
  // semantic mode: where the frontier's move began to change messages.
  std::uint32_t first_change(std::uint32_t r) const {
    const std::uint32_t prev_end = w_.ends[r - 1];
    if (w_.frontier[r] == w_.frontier[r - 1]) return prev_end;
    return std::min(w_.held.first_change(w_.changed, w_.frontier[r - 1], w_.frontier[r]), prev_end);
  }
  double cost(double total, double shared) const {
    shared = std::min(shared, total);
    return p_.cache_read_price * shared + p_.cache_write_price * (total - shared);
  }
  void costs(std::uint32_t r, std::uint32_t first, std::uint64_t extra, double& without, double& with) const {
    const std::uint32_t end = w_.ends[r];
    const double total_with = double(sent(end, r, r)) - double(extra);
    if (r == 0) {
      without = cost(double(base(end, 0)), 0);
      with = cost(total_with, 0);
      return;
    }
    const std::uint32_t s0 = first_change(r), s1 = std::min(s0, first);
    without = cost(double(base(end, r)), double(base(s0, r - 1)));
    with = cost(total_with, double(sent(s1, r - 1, r - 1)));
  }

  const CompletedTasksOptions& p_;
  const DietWithout& w_;
  const std::vector<std::uint64_t>& orig_ps_;
  const std::vector<Unit>& units_;
  std::vector<std::uint64_t> planned_ps_;
  double closed_without_ = 0, closed_with_ = 0;
};

// The part in `m` of `kind` answering (or making) call `id`; without an id,
// the one at `index` if it is of that kind. (Message or const Message.)
template <class M>
auto* find_part(M& m, PartKind kind, std::string_view id, std::uint32_t index) {
  decltype(&m.parts[0]) found = nullptr;
  for (auto& p : m.parts)
    if (p.kind == kind && !id.empty() && p.id == id) return &p;
  if (id.empty() && index < m.parts.size() && m.parts[index].kind == kind) found = &m.parts[index];
  return found;
}

}  // namespace

std::string tombstone_text(std::string_view title, std::string_view id, std::uint64_t tokens) {
  std::string t = "[task \"";
  t += title;
  t += "\" completed: output archived as ";
  t += id;
  t += ", " + with_commas(tokens) + " tokens; tokendiet_recall can read it back]";
  return t;
}

std::vector<Tombstone> completed_tasks_plan(const Conversation& conv, const CompletedTasksOptions& opt,
                                            const std::vector<std::uint64_t>& tokens, const WorkingMemory& wm,
                                            const DietWithout& without, const TokenCounter& counter,
                                            Memo<TaskCallFacts>* task_calls, Memo<CallWrites>* writes) {
  std::vector<Tombstone> out;
  if (!opt.completed_tasks || opt.completed_tasks_tools.empty()) return out;
  const auto& msgs = conv.messages;
  const auto size = static_cast<std::uint32_t>(msgs.size());
  std::vector<std::uint64_t> orig_ps(size + 1, 0);
  for (std::uint32_t i = 0; i < size; ++i) orig_ps[i + 1] = orig_ps[i] + tokens[i];
  if (orig_ps[size] <= opt.semantic_threshold) return out;  // the common case: a short history
  const TaskHistory history = track_tasks(conv, opt, task_calls);
  if (history.owned.empty()) return out;

  // Names of calls, for exclude_tools.
  std::unordered_map<std::string_view, std::string_view> call_names;
  if (!opt.exclude_tools.empty())
    for (const Message& m : msgs)
      for (const Part& p : m.parts)
        if (p.kind == PartKind::ToolCall && !p.id.empty()) call_names[p.id] = p.name;

  // What could ever go in this history: owned parts whose tasks were all
  // completed after their call, the part itself before that completion.
  std::vector<Unit> units;
  std::vector<Tombstone> stones;  // parallel to units
  for (const TaskOwned& o : history.owned) {
    const Part& p = msgs[o.message].parts[o.part];
    if (!p.editable) continue;
    const bool call = p.kind == PartKind::ToolCall;
    if (p.text.size() < (call ? opt.completed_tasks_arguments_bytes : opt.completed_tasks_min_output_bytes)) continue;
    std::string_view name = p.name;
    if (!call && name.empty()) {
      auto it = call_names.find(p.id);
      if (it != call_names.end()) name = it->second;
    }
    if (detail::excluded_tool(opt.exclude_tools, name)) continue;
    std::uint32_t completion = 0;
    bool done = true;
    for (std::uint32_t t : o.tasks) {
      auto c = history.tasks[t].completed_after(o.call_message);
      if (!c) {
        done = false;
        break;
      }
      completion = std::max(completion, *c);
    }
    if (!done || completion <= o.message) continue;  // from the completion on, everything stays
    // A call that writes a file keeps its arguments: they are the file's
    // lines as the agent wrote them, and a later task's edits of that file
    // quote them (docs/design.md §Policy, Semantic; docs/benchmarks.md
    // §Written files stay). Checked last: it reads the whole arguments.
    if (call && writes_a_file(p, writes)) continue;
    Tombstone s;
    s.message = o.message;
    s.part = o.part;
    s.kind = p.kind;
    s.id = p.id;
    s.archived.id = archive_id(p.text);
    s.archived.task = title_of(history, o.tasks, o.call_message, opt.completed_tasks_title_bytes);
    const std::uint64_t n = counter.count(p.text);
    s.archived.tokens = static_cast<std::uint32_t>(std::min<std::uint64_t>(n, UINT32_MAX));
    const std::string line = tombstone_text(s.archived.task, s.archived.id, n);
    s.text = call ? json_object_with("tombstone", line) : line;
    const std::uint64_t after = counter.count(s.text);
    if (after >= n) continue;  // a tombstone no smaller than the output
    // The output as the frontier's plan cut it (where it did).
    std::uint64_t cut = n;
    auto k = std::lower_bound(without.changed.begin(), without.changed.end(), o.message);
    if (k != without.changed.end() && *k == o.message && without.pruned)
      if (const Part* q = find_part((*without.pruned)[k - without.changed.begin()], p.kind, p.id, o.part))
        cut = counter.count(q->text);
    units.push_back({o.message, o.part, &p, completion, o.tasks, n - after, cut > after ? cut - after : 0});
    stones.push_back(std::move(s));
  }
  if (units.empty()) return out;

  // The session's requests, replayed in order.
  const std::vector<std::uint32_t>& ends = without.ends;
  Session session(opt, without, orig_ps, units);
  std::uint32_t turns = 0;
  for (std::uint32_t r = 0; r < ends.size(); ++r) {
    const std::uint32_t at = ends[r];
    const std::uint32_t frontier = without.frontier[r];
    while (turns < wm.turn_start.size() && wm.turn_start[turns] < at) ++turns;
    std::uint32_t first = at;
    std::uint64_t saved = 0;
    std::vector<std::uint32_t> step;
    if (orig_ps[at] > opt.semantic_threshold && turns >= opt.min_turns) {
      const std::uint32_t limit = evictable_end(conv, opt, wm, at, turns);
      for (std::uint32_t k = 0; k < units.size(); ++k) {
        const Unit& u = units[k];
        if (u.placed != ~0u || u.completion >= at || u.message >= limit) continue;
        bool closed = true;
        for (std::uint32_t t : u.tasks) closed = closed && history.tasks[t].status_before(at) == TaskStatus::Completed;
        if (!closed || u.saved(frontier, without.held) == 0)
          continue;  // reopened: nothing more of it goes until it is completed again
        step.push_back(k);
        saved += u.saved(frontier, without.held);
        first = std::min(first, u.message);
      }
    }
    if (!step.empty() && saved >= opt.clear_at_least_tokens) {
      // The frontier's payback rule (pipeline.cpp): the suffix from the first
      // tombstone on was cached and is written again.
      const std::uint64_t before = session.sent(at, r, r) - session.sent(first, r, r);
      const double rewritten = double(before - std::min(before, saved));
      const double was_cached = double(before);
      // A step needs turns > the window (evictable_end), so the turns it may
      // count on are this request's: the grid point `turns - window` plus the window.
      const std::uint32_t window = std::max<std::uint32_t>(opt.window_turns, 1);
      if (pays_back(opt, saved, rewritten, was_cached, turns - window) && session.allows(r, first, saved)) {
        for (std::uint32_t k : step) units[k].placed = r;
      } else {
        first = at;
      }
    } else {
      first = at;
    }
    session.close(r, first);
  }
  for (std::uint32_t k = 0; k < units.size(); ++k) {
    if (units[k].placed == ~0u) continue;
    stones[k].placed_now = units[k].placed + 1 == ends.size();
    stones[k].archived.text = units[k].source->text;
    out.push_back(std::move(stones[k]));
  }
  return out;
}

StrategyStats completed_tasks(Conversation& conv, std::vector<Tombstone> tombstones,
                              std::vector<ArchivedOutput>* archived) {
  StrategyStats st{.name = "completed_tasks"};
  for (Tombstone& s : tombstones) {
    if (s.message >= conv.messages.size()) continue;
    Message& m = conv.messages[s.message];
    if (m.removed) continue;
    // The part: by its call id where it has one, else where it stood.
    Part* part = find_part(m, s.kind, s.id, s.part);
    if (!part || !part->editable) continue;
    st.add(s.message, s.archived.text.size(), s.text.size());
    set_text(m, *part, std::move(s.text));
    if (archived) archived->push_back(std::move(s.archived));
  }
  return st;
}

}  // namespace td::pruning
