#include "pruning/strategy_order.hpp"

#include <utility>

#include "pruning/pipeline_caches.hpp"
#include "pruning/strategies/copied_lines.hpp"
#include "pruning/strategies/pairing_repair.hpp"

namespace td::pruning {

std::vector<StrategyStats> run_lossy_strategies(Conversation& conv, const LossyOptions& o, std::uint32_t limit,
                                                std::uint32_t thinking_limit, PipelineCaches* caches) {
  // The lines the agent copied from tool outputs, read before any strategy edits them.
  const CopiedLines copied(conv, limit, o.stale_assistant_text.stale_assistant_text_copied_line_bytes);
  Memo<std::string>* folds = caches ? &caches->folds : nullptr;
  Memo<Snipped>* snips = caches ? &caches->snips : nullptr;
  return {
      old_thinking_before(conv, o.old_thinking, thinking_limit),
      identical_tool_calls(conv, o.identical_tool_calls, limit),
      identical_tool_outputs(conv, o.identical_tool_outputs, limit),
      low_entropy(conv, o.low_entropy, limit, folds),
      stale_tool_outputs(conv, o.stale_tool_outputs, limit, snips),
      stale_assistant_text(conv, o.stale_assistant_text, limit, snips, copied),
  };
}

std::uint64_t run_after_frontier(Conversation& conv, AfterFrontier in, PipelineResult& r) {
  auto& s = r.strategies;
  s.push_back(place_tombstones(conv, std::move(in.tombstones), &r.archived));
  // Trim-middle cuts on the tokens as pruned so far, tombstones included.
  for (const StrategyStats::Edit& e : s.back().edits) in.now[e.message] = in.tally.message(conv.messages[e.message]);
  std::uint64_t total = r.tokens_before;
  for (std::size_t i = 0; i < in.now.size(); ++i) total = total - in.orig[i] + in.now[i];
  s.push_back(trim_middle(conv, in.trim_middle, in.wm, r.stale_turns, in.now, total, &r.trimmed_until));
  // Trim-middle, when it cut (survival's hardest level), dropped the turns a
  // recap would replace, and more.
  s.push_back(r.trimmed_until ? StrategyStats{.name = "recap"}
                              : recap(conv, in.recap, in.summaries, &r.recap_summary_missing));
  s.push_back(pairing_repair(conv));
  return total;
}

}  // namespace td::pruning
