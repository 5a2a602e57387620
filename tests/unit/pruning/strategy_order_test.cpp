// The strategies' order, written once (pruning/strategy_order.hpp;
// docs/design.md §Strategies): the pipeline reports every step of the table,
// in its order, under the table's names.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "pruning/strategy_order.hpp"
#include "pruning_support.hpp"

using namespace td::pruning;
using namespace td::pruning::test;

namespace {
std::vector<std::string> names(const std::vector<StrategyStats>& stats) {
  std::vector<std::string> out;
  for (const StrategyStats& s : stats) out.emplace_back(s.name);
  return out;
}
const std::vector<std::string> kExpected = {
    "old_thinking",       "identical_tool_calls", "identical_tool_outputs", "similar_tool_outputs", "low_entropy",
    "stale_tool_outputs", "stale_assistant_text", "completed_tasks",        "trim_middle",          "recap",
    "pairing_repair"};
}  // namespace

TEST_CASE("strategy order: the table lists every step once, in order, by stage") {
  std::vector<std::string> all = names(strategy_names(Stage::BeforeFrontier));
  CHECK(all.size() == 7);
  for (const std::string& n : names(strategy_names(Stage::AfterFrontier))) all.push_back(n);
  CHECK(all == kExpected);
}

TEST_CASE("strategy order: the pipeline reports each step under the table's name, frontier or none") {
  // Long enough for the frontier to step (the plan's reports), and too short
  // for any step (the table's names, nothing run before the frontier).
  for (int steps : {40, 2}) {
    CAPTURE(steps);
    Conversation c = agent_loop(steps, [](int k) { return numbered_lines(60, "out " + std::to_string(k) + " line"); });
    const PipelineResult r = prune(c, stepping_profile(), QuarterCounter{});
    CHECK(names(r.strategies) == kExpected);
    if (steps == 40) CHECK(r.stale_turns > 0);
  }
}
