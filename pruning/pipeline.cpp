#include "pruning/pipeline.hpp"

#include <algorithm>

#include "pruning/conversation_tokens.hpp"
#include "pruning/strategies/identical_tool_calls.hpp"
#include "pruning/strategies/identical_tool_outputs.hpp"
#include "pruning/strategies/low_entropy.hpp"
#include "pruning/strategies/old_thinking.hpp"
#include "pruning/strategies/pairing_repair.hpp"
#include "pruning/strategies/stale_tool_outputs.hpp"
#include "pruning/strategies/trim_middle.hpp"
#include "pruning/strategies/working_memory.hpp"

namespace td::pruning {

const char* mode_name(Mode m) {
  switch (m) {
    case Mode::None: return "none";
    case Mode::Standard: return "standard";
  }
  return "none";
}

namespace {

// Steps 2-6: the lossy strategies, on messages [0, limit), in order.
void run_lossy(Conversation& conv, const Profile& profile, std::uint32_t limit, std::vector<StrategyStats>* out) {
  StrategyStats s[] = {
      prune_old_thinking(conv, profile, limit),
      dedup_tool_calls(conv, profile, limit),
      dedup_tool_outputs(conv, profile, limit),
      fold_low_entropy(conv, profile, limit),
      snip_stale_tool_outputs(conv, profile, limit),
  };
  if (out) out->insert(out->end(), std::begin(s), std::end(s));
}

// Prefix sums: ps[i] = sum of v[0, i).
std::vector<std::uint64_t> prefix_sums(const std::vector<std::uint64_t>& v) {
  std::vector<std::uint64_t> ps(v.size() + 1, 0);
  for (std::size_t i = 0; i < v.size(); ++i) ps[i + 1] = ps[i] + v[i];
  return ps;
}

struct Frontier {
  std::uint32_t turns = 0;     // grid point reached (0: nothing stale)
  std::uint32_t messages = 0;  // message index where the stale part ends
};

// Where the stale frontier stands: the last grid point each step to which
// was worth taking, replaying the steps in order. Every input is a function
// of the history up to the request that first allowed the step, so the answer
// is the same in every later request (see pipeline.hpp).
Frontier choose_frontier(const Conversation& conv, const Profile& profile, const WorkingMemory& wm,
                         const std::vector<std::uint64_t>& orig, const std::vector<std::uint64_t>& planned,
                         const Conversation& plan) {
  const auto size = static_cast<std::uint32_t>(conv.messages.size());
  const auto orig_ps = prefix_sums(orig);
  const auto plan_ps = prefix_sums(planned);
  Frontier f;
  for (std::size_t k = 0; k < wm.grid.size(); ++k) {
    const std::uint32_t g = wm.grid[k];
    const std::uint32_t gm = wm.start_of(g, size);
    const std::uint32_t end = wm.grid_eligible_end[k];
    if (orig_ps[end] < profile.trigger_tokens) continue;  // the history was still small then
    std::uint32_t first = f.messages;
    while (first < gm && !plan.messages[first].changed) ++first;
    if (first == gm) {  // nothing to prune in this step: moving costs nothing
      f = {g, gm};
      continue;
    }
    const std::uint64_t before = orig_ps[gm] - orig_ps[f.messages];
    const std::uint64_t after = plan_ps[gm] - plan_ps[f.messages];
    const std::uint64_t saved = before > after ? before - after : 0;
    if (saved == 0 || saved < profile.clear_at_least_tokens) continue;
    // That request: the suffix from the first edit on was cached and is now
    // written again, pruned up to gm and as it was after it.
    const double rewritten = double(plan_ps[gm] - plan_ps[first]) + double(orig_ps[end] - orig_ps[gm]);
    const double was_cached = double(orig_ps[end] - orig_ps[first]);
    const double cost = profile.cache_write_price * rewritten - profile.cache_read_price * was_cached;
    const double gain = profile.cache_read_price * double(saved) * double(profile.payback_requests);
    if (gain >= cost) f = {g, gm};
  }
  return f;
}

void run_on(Conversation& conv, const Profile& profile, const TokenCounter& counter, PipelineResult& r) {
  auto& msgs = conv.messages;
  const auto size = static_cast<std::uint32_t>(msgs.size());
  std::vector<std::uint64_t> orig(size);
  for (std::uint32_t i = 0; i < size; ++i) orig[i] = message_tokens(msgs[i], counter);

  const WorkingMemory wm = working_memory(conv, profile);
  Frontier f;
  std::vector<std::uint64_t> now = orig;  // per-message tokens as pruned so far
  if (!wm.grid.empty()) {
    // Plan on a copy of everything the largest step could prune; later
    // messages only lend their roles (the strategies never look ahead).
    const std::uint32_t plan_limit = wm.start_of(wm.grid.back(), size);
    Conversation plan;
    plan.messages.reserve(size);
    plan.messages.assign(msgs.begin(), msgs.begin() + plan_limit);
    for (std::uint32_t i = plan_limit; i < size; ++i) {
      Message role_only;
      role_only.role = msgs[i].role;
      plan.messages.push_back(std::move(role_only));
    }
    run_lossy(plan, profile, plan_limit, nullptr);
    std::vector<std::uint64_t> planned = orig;
    for (std::uint32_t i = 0; i < plan_limit; ++i)
      if (plan.messages[i].changed) planned[i] = message_tokens(plan.messages[i], counter);
    f = choose_frontier(conv, profile, wm, orig, planned, plan);
    for (std::uint32_t i = 0; i < f.messages; ++i) now[i] = planned[i];
  }
  r.stale_turns = f.turns;
  r.stale_messages = f.messages;
  run_lossy(conv, profile, f.messages, &r.strategies);

  std::uint64_t total = r.tokens_before;
  for (std::uint32_t i = 0; i < size; ++i) total = total - orig[i] + now[i];
  r.strategies.push_back(trim_middle(conv, profile, wm, f.turns, now, total));
  r.strategies.push_back(repair_pairing(conv));
  for (const auto& s : r.strategies)
    if (s.fired()) r.fired.emplace_back(s.name);
  r.tokens_after = conversation_tokens(conv, counter);
}

}  // namespace

PipelineResult run_pipeline(Conversation& conv, const Profile& profile, const TokenCounter& counter) {
  PipelineResult r;
  r.tokens_before = conversation_tokens(conv, counter);
  r.tokens_after = r.tokens_before;
  if (!profile.enabled) return r;
  r.mode = Mode::Standard;
  r.shadow = profile.shadow;
  if (profile.shadow) {
    Conversation copy = conv;
    run_on(copy, profile, counter, r);
  } else {
    run_on(conv, profile, counter, r);
  }
  return r;
}

}  // namespace td::pruning
