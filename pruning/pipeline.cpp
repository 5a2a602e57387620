#include "pruning/pipeline.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <unordered_set>

#include "pruning/loss_cap.hpp"
#include "pruning/lossy_plan.hpp"
#include "pruning/strategies/edited_files.hpp"
#include "pruning/strategy_order.hpp"
#include "pruning/tally.hpp"

namespace td::pruning {

namespace {

// Prefix sums: ps[i] = sum of v[0, i).
std::vector<std::uint64_t> prefix_sums(const std::vector<std::uint64_t>& v) {
  std::vector<std::uint64_t> ps(v.size() + 1, 0);
  for (std::size_t i = 0; i < v.size(); ++i) ps[i + 1] = ps[i] + v[i];
  return ps;
}

struct Frontier {
  std::uint32_t turns = 0;                // grid point reached (0: nothing stale)
  std::uint32_t messages = 0;             // message index where the stale part ends
  std::vector<std::uint32_t> at_request;  // `messages` as each request of the session left it
};

// Where the stale frontier stands: replaying the session's requests in
// order, at each one every grid point it allows (and the frontier has not
// passed) is stepped to if the step is worth taking there; a step the loss
// cap refuses is asked again at the next request, when the session has cost
// more (pruning/loss_cap.hpp). Every input of a decision is a function of the
// history up to the request it is made at, so the answer is the same in every
// later request (see pipeline.hpp).
Frontier choose_frontier(const Conversation& conv, const Profile& profile, const WorkingMemory& wm,
                         const std::vector<std::uint64_t>& orig, const std::vector<std::uint64_t>& planned,
                         const std::vector<std::uint32_t>& changed, const HeldForms& held) {
  const auto size = static_cast<std::uint32_t>(conv.messages.size());
  const auto orig_ps = prefix_sums(orig);
  const auto plan_ps = prefix_sums(planned);
  const StepCostOptions cost(profile);
  LossCap cap(conv, cost, orig_ps, plan_ps, &held);
  // Tokens of messages [0, x) sent with the frontier at message `fm`.
  auto sent = [&](std::uint32_t x, std::uint32_t fm) {
    const std::uint32_t p = std::min(x, fm);
    return plan_ps[p] + orig_ps[x] - orig_ps[p] + held.extra(x, fm);
  };
  Frontier f;
  // The step to grid point k at the request holding [0, at).
  auto step = [&](std::size_t k, std::uint32_t at) {
    const std::uint32_t g = wm.grid[k];
    const std::uint32_t gm = wm.start_of(g, size);
    if (orig_ps[wm.grid_eligible_end[k]] < profile.trigger_tokens) return;  // the history was still small then
    // The first message the step would change: a pruned form applying from
    // it on (a read it still holds does not), or a held read it releases.
    const std::uint32_t first = held.first_change(changed, f.messages, gm);
    if (first == gm) {  // nothing to prune in this step: moving costs nothing
      f.turns = g;
      f.messages = gm;
      cap.take(size, gm, at);
      return;
    }
    const std::uint64_t before = sent(at, f.messages);
    const std::uint64_t after = sent(at, gm);
    const std::uint64_t saved = before > after ? before - after : 0;
    if (saved == 0 || saved < cost.clear_at_least_tokens) return;
    // That request: the suffix from the first edit on was cached and is now
    // written again, pruned up to gm and as it was after it.
    const double rewritten = double(after - sent(first, gm));
    const double was_cached = double(before - sent(first, f.messages));
    if (!pays_back(cost, saved, rewritten, was_cached, g) || !cap.allows(first, gm, at)) return;
    f.turns = g;  // not f = {...}: at_request keeps what the earlier requests had
    f.messages = gm;
    cap.take(first, gm, at);
  };
  // The grid ascends and the frontier only moves forward: the points at or
  // behind it are never tried again, so each request starts past them.
  std::size_t ahead = 0;
  for (std::uint32_t at : cap.request_ends()) {
    while (ahead < wm.grid.size() && wm.grid[ahead] <= f.turns) ++ahead;
    for (std::size_t k = ahead; k < wm.grid.size() && wm.grid_eligible_end[k] <= at; ++k)
      if (wm.grid[k] > f.turns) step(k, at);
    f.at_request.push_back(f.messages);
  }
  return f;
}

// Marks the last part before `end` that a provider breakpoint may sit on
// (Part::cache_anchor = rank): text, tool calls and tool results only (a
// signed thinking block or an image is not a place for one), in the message
// just before `end`, of the array (not a system field); none when that
// message has no such part.
void mark_before(Conversation& conv, std::uint32_t end, std::uint8_t rank) {
  end = std::min<std::uint32_t>(end, static_cast<std::uint32_t>(conv.messages.size()));
  for (std::uint32_t i = end; i-- > 0;) {
    Message& m = conv.messages[i];
    if (m.removed || m.system_field) continue;
    for (std::size_t k = m.parts.size(); k-- > 0;) {
      Part& p = m.parts[k];
      const bool markable = (p.kind == PartKind::Text && !p.text.empty()) || p.kind == PartKind::ToolCall ||
                            p.kind == PartKind::ToolResult;
      if (markable) {
        if (p.cache_anchor == 0) p.cache_anchor = rank;
        return;
      }
    }
    return;
  }
}

// The cache anchors (Part::cache_anchor): `end` is the frontier the previous
// request left, so every request since the last step sent [0, end) alike,
// and the next step's first change comes at or after it, or at the first
// read still held there (`held`, end when none), which a step may release.
void mark_cache_anchor(Conversation& conv, std::uint32_t end, std::uint32_t held) {
  for (Message& m : conv.messages)
    for (Part& p : m.parts) p.cache_anchor = 0;
  mark_before(conv, end, 1);
  if (held < end) mark_before(conv, held, 2);
}

// The archived entries whose tombstones are still in `conv` (trim-middle and
// pairing repair may have dropped some).
void keep_archived_present(const Conversation& conv, std::vector<ArchivedOutput>& archived) {
  std::vector<std::string_view> ids;
  for (const Message& m : conv.messages) {
    if (m.removed) continue;
    for (const Part& p : m.parts)
      if (p.edited)
        for (const ArchivedOutput& a : archived)
          if (p.text.find(a.id) != std::string::npos) ids.push_back(a.id);
  }
  std::erase_if(archived,
                [&](const ArchivedOutput& a) { return std::find(ids.begin(), ids.end(), a.id) == ids.end(); });
}

// Every text a notice of `conv` names, once: the parts' hidden texts, those
// of messages trim-middle or the recap took out included (their notices'
// spans show those messages' own notices).
void collect_hidden(const Conversation& conv, std::vector<std::shared_ptr<const std::string>>& out) {
  std::unordered_set<const std::string*> seen;
  for (const Message& m : conv.messages)
    for (const Part& p : m.parts)
      for (const auto& h : p.hidden)
        if (seen.insert(h.get()).second) out.push_back(h);
}

// Whether the strategy named `name` ran and changed something: later steps
// ask by name, never by position in the order.
bool fired(const std::vector<StrategyStats>& strategies, std::string_view name) {
  return std::any_of(strategies.begin(), strategies.end(),
                     [&](const StrategyStats& s) { return s.fired() && name == s.name; });
}

// The working memory of `profile` with the grid points whose history had
// reached the trigger: only those can be stepped to (the rest never will be
// in this request).
WorkingMemory stepping_grid(const Conversation& conv, const Profile& profile, const std::vector<std::uint64_t>& orig) {
  WorkingMemory wm = working_memory(conv, profile);
  std::uint64_t running = 0;
  std::uint32_t counted = 0, keep = 0;
  for (std::size_t k = 0; k < wm.grid.size(); ++k) {
    for (; counted < wm.grid_eligible_end[k]; ++counted) running += orig[counted];
    if (running >= profile.trigger_tokens) keep = static_cast<std::uint32_t>(k) + 1;
  }
  wm.grid.resize(keep);
  wm.grid_eligible_end.resize(keep);
  return wm;
}

// The plan's per-message tokens in the forms that apply once stale, and the
// reads it holds whole until the frontier reaches their hold's grid point
// (strategies/edited_files.hpp): every request is weighed as it is sent.
struct PlannedForms {
  std::vector<std::uint64_t> planned;
  HeldForms held;
};
PlannedForms planned_forms(const LossyPlan& plan, const std::vector<std::uint64_t>& plan_tok,
                           const std::vector<std::uint64_t>& orig, const WorkingMemory& wm, const Tally& tally) {
  PlannedForms out{orig, {}};
  const auto size = static_cast<std::uint32_t>(orig.size());
  for (std::size_t k = 0; k < plan.changed.size(); ++k) {
    const std::uint32_t i = plan.changed[k];
    out.planned[i] = plan_tok[k];
    if (const std::uint32_t g = plan.held_until[k]; g != 0) {
      const LossyPlan::PartlyHeld* partly = plan.partly(k);
      const std::uint64_t held = partly ? LossyPlan::tokens_of(*partly, tally) : orig[i];
      HeldForms::Hold h;
      h.message = i;
      h.extra = held > plan_tok[k] ? held - plan_tok[k] : 0;
      if (partly) h.parts = partly->parts;
      if (g != kHeldBeyond) h.released_at = wm.start_of(g, size);
      out.held.holds.push_back(h);
    }
  }
  return out;
}

// The requests of the session as the `standard` profile's diet sent them
// (its own plan: the forms depend on its step grid, and its frontier), for
// the recap at survival's levels, whose lossy profile is another.
DietWithout standard_basis(const Conversation& conv, const Profile& standard, const std::vector<std::uint64_t>& orig,
                           const Tally& tally, PipelineCaches* caches) {
  DietWithout basis{request_ends(conv), {}, orig, {}, {}, {}};
  const WorkingMemory wm = stepping_grid(conv, standard, orig);
  if (wm.grid.empty()) {
    basis.frontier.assign(basis.ends.size(), 0);
    return basis;
  }
  const auto size = static_cast<std::uint32_t>(conv.messages.size());
  const LossyOptions options(standard);
  const std::shared_ptr<const LossyPlan> plan = plan_lossy(conv, options, wm.start_of(wm.grid.back(), size),
                                                           old_thinking_end(conv, options.old_thinking), tally, caches);
  PlannedForms forms = planned_forms(*plan, plan_tokens(*plan, tally), orig, wm, tally);
  basis.frontier = choose_frontier(conv, standard, wm, orig, forms.planned, plan->changed, forms.held).at_request;
  basis.planned = std::move(forms.planned);
  basis.held = std::move(forms.held);
  return basis;
}

// `profile` drives the lossy strategies and the frontier; `trim` drives
// trim-middle (the same profile, except at survival's hardest level).
void run_on(Conversation& conv, const Counted& counted, const Profile& profile, const Profile& trim,
            const PipelineSettings& settings, const TokenCounter& counter, const Tally& tally, PipelineCaches* caches,
            PipelineResult& r) {
  auto& msgs = conv.messages;
  const auto size = static_cast<std::uint32_t>(msgs.size());
  const std::vector<std::uint64_t>& orig = counted.messages;
  r.tokens_before = counted.total;
  const WorkingMemory wm = stepping_grid(conv, profile, orig);
  r.turns = wm.turns();

  // The recap is read from the history as the client sent it (before the
  // plan's forms replace it), on the profile's own grid (`trim`: survival's
  // levels change only trim-middle's constants there), and weighed on the
  // requests as the diet without it sent them (`basis`: the frontier each
  // request left), so it renders the same on every later request and a
  // history the stale cuts keep small is not recapped (docs/design.md
  // §Policy, Standard's recap).
  RecapPlan recap_at;
  auto plan_recap = [&](const DietWithout& basis) {
    return recap_plan(conv, trim, orig, counted.fixed, settings.context_window, tally,
                      caches ? &caches->turn_lines : nullptr, caches ? &caches->spans : nullptr, &basis);
  };
  Frontier f;
  std::vector<std::uint64_t> now = orig;  // per-message tokens as pruned
  std::vector<StrategyStats> lossy;
  // The diet without semantic mode, request by request, for its decision.
  DietWithout without{request_ends(conv), {}, orig, {}, {}, {}};
  std::vector<Tombstone> tombstones;
  if (!wm.grid.empty()) {
    // Plan on everything the largest step could reach, pick the frontier
    // from what each step would save, then keep the pruned forms before it.
    const std::uint32_t plan_limit = wm.start_of(wm.grid.back(), size);
    const LossyOptions options(profile);
    const std::uint32_t thinking_end = old_thinking_end(conv, options.old_thinking);
    memo_detail::Key plan_key;
    const std::shared_ptr<const LossyPlan> plan =
        plan_lossy(conv, options, plan_limit, thinking_end, tally, caches, nullptr, &plan_key);
    if (caches)
      r.ahead = next_plan(conv, wm.turn_start, wm.grid.back(), profile.frontier_step_turns, options, thinking_end,
                          tally, *caches, plan_key);
    // The steps are weighed on the forms that apply once stale; a held read
    // (strategies/edited_files.hpp) counts whole until the step that reaches
    // its hold, whose rewrite then starts at the read.
    const std::vector<std::uint64_t> plan_tok = plan_tokens(*plan, tally);
    PlannedForms forms = planned_forms(*plan, plan_tok, orig, wm, tally);
    const std::vector<std::uint64_t>& planned = forms.planned;
    f = choose_frontier(conv, profile, wm, orig, planned, plan->changed, forms.held);
    // The lines the session's model recalled widen the forms that are sent,
    // never the decisions: the frontier and semantic mode are decided on the
    // plan without them, as every earlier request of the session was (the
    // steps are replayed from the history, and a form widened now must not
    // undo a step an earlier request took). A range applies from the first
    // frontier past the one its recall was made at: the widened form goes
    // out with a step, whose rewrite of the cached prefix it shares
    // (docs/design.md §Recall, "Recalled lines stay").
    std::shared_ptr<const LossyPlan> sent = plan;
    if (settings.recalled && !settings.recalled->empty()) {
      const RecalledLines applying = settings.recalled->applying(f.turns);
      if (!applying.empty()) sent = plan_lossy(conv, options, plan_limit, thinking_end, tally, caches, &applying);
    }
    const std::vector<std::uint64_t> sent_tok = sent == plan ? plan_tok : plan_tokens(*sent, tally);
    // Semantic mode decides on the history as sent, before the plan's forms replace it.
    without.frontier = f.at_request;
    without.planned = planned;
    without.held = std::move(forms.held);
    without.changed = plan->changed;
    without.pruned = &plan->pruned;
    tombstones = completed_tasks_plan(conv, profile, orig, wm, without, counter, caches ? &caches->task_calls : nullptr,
                                      caches ? &caches->writes : nullptr);
    // The recap is weighed on the requests as the profile's own diet sent
    // them: at survival's levels `profile` is the eager one, and the recap
    // stays the standard one's, the same at every level.
    recap_at = &trim == &profile ? plan_recap(without) : plan_recap(standard_basis(conv, trim, orig, tally, caches));
    std::vector<std::uint32_t> held;  // before the frontier, still whole
    for (std::size_t k = 0; k < sent->changed.size() && sent->changed[k] < f.messages; ++k) {
      const std::uint32_t i = sent->changed[k];
      if (sent->held_until[k] > f.turns) {
        held.push_back(i);  // its cuts not reported until it is released
        if (const LossyPlan::PartlyHeld* partly = sent->partly(k)) {
          const std::uint32_t origin = msgs[i].origin;
          msgs[i] = partly->form;
          msgs[i].origin = origin;
          now[i] = LossyPlan::tokens_of(*partly, tally);
        }
        continue;
      }
      const std::uint32_t origin = msgs[i].origin;  // the plan may come from a body laid out otherwise
      msgs[i] = sent->pruned[k];
      msgs[i].origin = origin;
      now[i] = sent_tok[k];
    }
    lossy.reserve(sent->stats.size());
    for (const auto& s : sent->stats) lossy.push_back(s.before(f.messages, held));
  } else {
    lossy = strategy_names(Stage::BeforeFrontier);  // their names, with nothing done
    without.frontier.assign(without.ends.size(), 0);
    tombstones = completed_tasks_plan(conv, profile, orig, wm, without, counter, caches ? &caches->task_calls : nullptr,
                                      caches ? &caches->writes : nullptr);
    recap_at = plan_recap(without);
  }
  r.stale_turns = f.turns;
  r.stale_messages = f.messages;
  // Before the first step there is no earlier frontier to anchor at: the
  // anchor goes at this request's, so the next request reads the pruned
  // prefix the first step wrote (a client's own breakpoint on its newest
  // message is often not read back: Claude Code sends that message as a
  // block once and as a string next; docs/design.md §The stale frontier).
  const std::uint32_t prev = f.at_request.size() >= 2 ? f.at_request[f.at_request.size() - 2] : 0;
  const std::uint32_t anchor = prev > 0 ? prev : f.messages;
  mark_cache_anchor(conv, anchor, without.held.first_held(anchor));
  r.strategies = std::move(lossy);

  r.semantic_stepped =
      std::any_of(tombstones.begin(), tombstones.end(), [](const Tombstone& t) { return t.placed_now; });
  const TrimMiddleOptions trim_options(trim);
  StageInputs::After after{.tombstones = std::move(tombstones),
                           .trim_middle = trim_options,
                           .wm = wm,
                           .recap = recap_at,
                           .summaries = settings.recap_summaries,
                           .orig = orig,
                           .now = now,
                           .tally = tally,
                           .result = r};
  std::vector<StrategyStats> after_frontier = run_strategies(Stage::AfterFrontier, conv, {.after = &after});
  r.strategies.reserve(r.strategies.size() + after_frontier.size());
  for (StrategyStats& s : after_frontier) r.strategies.push_back(std::move(s));
  const std::uint64_t total = after.total;
  const bool recapped = fired(r.strategies, "recap");
  r.recap_stepped = recapped && recap_at.stepped;
  if (recapped) {
    r.recap_prefix_hash = recap_at.prefix_hash;
    if (r.recap_summary_missing) r.recap_extractive = recap_at.text;
  }
  // Only trim-middle, the recap and pairing repair change messages after
  // `now` was counted; otherwise the total is known already.
  const bool restructured = fired(r.strategies, "trim_middle") || recapped || fired(r.strategies, "pairing_repair");
  for (auto& s : r.strategies) {
    s.edits.clear();
    s.edits.shrink_to_fit();
    if (s.fired()) r.fired.emplace_back(s.name);
  }
  r.tokens_after = restructured ? tally.conversation(conv) : total;
  if (restructured && !r.archived.empty()) keep_archived_present(conv, r.archived);
  if (profile.recall) collect_hidden(conv, r.hidden);
}

}  // namespace

Counted count_tokens(const Conversation& conv, const TokenCounter& counter, PipelineCaches* caches) {
  const Tally tally(counter, caches ? &caches->counts : nullptr);
  Counted c;
  c.messages.resize(conv.messages.size());
  c.fixed = tally.fixed(conv);
  c.total = c.fixed;
  for (std::size_t i = 0; i < conv.messages.size(); ++i) c.total += c.messages[i] = tally.message(conv.messages[i]);
  return c;
}

PipelineResult run_pipeline(Conversation& conv, const Counted& counted, const Decision& decision,
                            const TokenCounter& counter, PipelineCaches* caches) {
  if (counted.messages.size() != conv.messages.size())
    throw std::invalid_argument("run_pipeline: the count is of another conversation");
  PipelineResult r;
  const Profile* profile = decision.settings.profile;
  if (decision.mode == Mode::None || !profile) {
    r.tokens_before = r.tokens_after = counted.total;
    return r;
  }
  const Tally tally(counter, caches ? &caches->counts : nullptr);
  const Level level = decision.settings.level;
  // Survival's levels are the profile with other constants: the frontier
  // free to move to the working-memory window turn by turn (every step
  // taken that saves anything, the loss cap too set aside), then
  // trim-middle dropping every whole turn
  // it may, on the profile's own grid of turns so the cut moves in steps.
  std::optional<Profile> eager, trim;
  if (level != Level::Standard) {
    eager = *profile;
    eager->frontier_step_turns = 1;
    eager->trigger_tokens = 0;
    eager->clear_at_least_tokens = 0;
    eager->cache_write_price = 0;
    eager->max_loss = 1e9;  // survival cuts to fit, whatever the session's cost
  }
  if (level == Level::DropMiddle) {
    trim = *profile;
    trim->trim_middle = true;
    trim->trim_middle_budget_tokens = 0;
    trim->trim_middle_recent_messages = 0;
  }
  const Profile& lossy = eager ? *eager : *profile;
  const Profile& trimming = trim ? *trim : *profile;
  if (decision.settings.write) {
    run_on(conv, counted, lossy, trimming, decision.settings, counter, tally, caches, r);
  } else {
    Conversation copy = conv;
    run_on(copy, counted, lossy, trimming, decision.settings, counter, tally, caches, r);
    r.archived.clear();  // nothing is written, so nothing needs archiving
    r.hidden.clear();    // nor recalling
  }
  return r;
}

}  // namespace td::pruning
