#include "pruning/strategy_order.hpp"

#include <iterator>
#include <utility>

#include "pruning/pipeline_caches.hpp"
#include "pruning/strategies/copied_lines.hpp"
#include "pruning/strategies/pairing_repair.hpp"

namespace td::pruning {

namespace {

// A stage's inputs, and what run_strategies() reads for its steps before the first one.
struct Run {
  StageInputs in;
  const CopiedLines* copied = nullptr;  // BeforeFrontier: read before any step edits the messages

  StageInputs::Before& before() const { return *in.before; }
  StageInputs::After& after() const { return *in.after; }
  Memo<std::string>* folds() const { return in.before->caches ? &in.before->caches->folds : nullptr; }
  Memo<Snipped>* snips() const { return in.before->caches ? &in.before->caches->snips : nullptr; }
  Memo<CallReads>* calls() const { return in.before->caches ? &in.before->caches->calls : nullptr; }
  Memo<OutputBody>* bodies() const { return in.before->caches ? &in.before->caches->bodies : nullptr; }
  Memo<std::string>* decoded() const { return in.before->caches ? &in.before->caches->decoded : nullptr; }
  Memo<LineKeys>* line_keys() const { return in.before->caches ? &in.before->caches->line_keys : nullptr; }
};

// The request's tokens as pruned so far.
std::uint64_t tokens_now(const StageInputs::After& a) {
  std::uint64_t total = a.result.tokens_before;
  for (std::size_t i = 0; i < a.now.size(); ++i) total = total - a.orig[i] + a.now[i];
  return total;
}

struct Step {
  const char* name;  // the strategy's file, function, stat and switch (docs/design.md §Strategies)
  Stage stage;
  StrategyStats (*run)(Conversation& conv, Run& run);
};

// The order, one line a step. Step 1, working_memory, decides which turns are
// stale and edits nothing: the pipeline runs it before both stages.
constexpr Step kOrder[] = {
    // 2. the reasoning of stale assistant messages dropped or blanked
    {"old_thinking", Stage::BeforeFrontier,
     [](Conversation& c, Run& r) {
       return old_thinking(c, r.before().options.old_thinking, r.before().thinking_limit);
     }},
    // 3. repeated tool calls collapsed (off by default)
    {"identical_tool_calls", Stage::BeforeFrontier,
     [](Conversation& c, Run& r) {
       return identical_tool_calls(c, r.before().options.identical_tool_calls, r.before().limit);
     }},
    // 4. a later identical tool output -> a reference to the first
    {"identical_tool_outputs", Stage::BeforeFrontier,
     [](Conversation& c, Run& r) {
       return identical_tool_outputs(c, r.before().options.identical_tool_outputs, r.before().limit, r.bodies());
     }},
    // 4b. a later output mostly repeating an earlier one -> a reference to it + the lines that differ
    {"similar_tool_outputs", Stage::BeforeFrontier,
     [](Conversation& c, Run& r) {
       return similar_tool_outputs(c, r.before().options.similar_tool_outputs, r.before().limit);
     }},
    // 5. repeated lines, progress bars, base64/hex blobs folded
    {"low_entropy", Stage::BeforeFrontier,
     [](Conversation& c, Run& r) {
       return low_entropy(c, r.before().options.low_entropy, r.before().limit, r.folds());
     }},
    // 6. head + tail (+ error lines, names) of large stale tool outputs
    {"stale_tool_outputs", Stage::BeforeFrontier,
     [](Conversation& c, Run& r) {
       return stale_tool_outputs(c, r.before().options.stale_tool_outputs, r.before().limit, r.snips(), r.calls(),
                                 r.before().recalled);
     }},
    // 7. head + tail (+ names) of long stale assistant prose and tool-call argument strings
    {"stale_assistant_text", Stage::BeforeFrontier,
     [](Conversation& c, Run& r) {
       return stale_assistant_text(c, r.before().options.stale_assistant_text, r.before().limit, r.snips(), *r.copied,
                                   r.decoded());
     }},
    // 8. semantic mode: a completed task's outputs -> tombstones (decided on
    //    the history as sent, placed on the pruned forms)
    {"completed_tasks", Stage::AfterFrontier,
     [](Conversation& c, Run& r) {
       StageInputs::After& a = r.after();
       StrategyStats s = completed_tasks(c, std::move(a.tombstones), &a.result.archived);
       // Trim-middle cuts on the tokens as pruned so far, tombstones included.
       for (const StrategyStats::Edit& e : s.edits) a.now[e.message] = a.tally.message(c.messages[e.message]);
       return s;
     }},
    // 9. whole middle turns dropped over a budget (off by default)
    {"trim_middle", Stage::AfterFrontier,
     [](Conversation& c, Run& r) {
       StageInputs::After& a = r.after();
       return trim_middle(c, a.trim_middle, a.wm, a.result.stale_turns, a.now, tokens_now(a), &a.result.trimmed_until);
     }},
    // 9b. over token_threshold, the turns between the task and a grid point
    //     before the window become one recap message; trim-middle, when it
    //     cut (survival's hardest level), dropped the turns a recap would
    //     replace, and more
    {"recap", Stage::AfterFrontier,
     [](Conversation& c, Run& r) {
       StageInputs::After& a = r.after();
       return a.result.trimmed_until ? StrategyStats{.name = "recap"}
                                     : recap(c, a.recap, a.summaries, &a.result.recap_summary_missing);
     }},
    // 10. no tool call without a result and no result without a call: always last
    {"pairing_repair", Stage::AfterFrontier, [](Conversation& c, Run&) { return pairing_repair(c); }},
};

}  // namespace

std::vector<StrategyStats> run_strategies(Stage stage, Conversation& conv, StageInputs in) {
  Run run{in};
  CopiedLines copied;
  if (stage == Stage::BeforeFrontier) {
    // The lines the agent copied from tool outputs, read before any step edits them.
    const StaleAssistantTextOptions& o = in.before->options.stale_assistant_text;
    copied = CopiedLines(conv, in.before->limit, o.stale_assistant_text_copied_line_bytes, run.line_keys());
    run.copied = &copied;
  }
  std::vector<StrategyStats> reports;
  reports.reserve(std::size(kOrder));
  for (const Step& step : kOrder)
    if (step.stage == stage) reports.push_back(step.run(conv, run));
  if (stage == Stage::AfterFrontier) in.after->total = tokens_now(*in.after);
  return reports;
}

std::vector<StrategyStats> strategy_names(Stage stage) {
  std::vector<StrategyStats> names;
  names.reserve(std::size(kOrder));
  for (const Step& step : kOrder)
    if (step.stage == stage) names.push_back(StrategyStats{.name = step.name});
  return names;
}

}  // namespace td::pruning
