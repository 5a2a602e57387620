#include <doctest/doctest.h>

#include "pruning/tokenizer/message_count.hpp"
#include "pruning/strategies/pairing_repair.hpp"
#include "pruning/strategies/trim_middle.hpp"
#include "pruning_support.hpp"

using namespace td::pruning;
using namespace td::pruning::test;

namespace {
struct Setup {
  Conversation c;
  WorkingMemory wm;
  std::vector<std::uint64_t> tokens;
  std::uint64_t total = 0;
};
Setup setup(int steps, const Profile& p) {
  Setup s;
  s.c = agent_loop(steps, [](int k) { return std::string(400, 'a' + k % 26); });
  s.wm = working_memory(s.c, p);
  QuarterCounter counter;
  for (const auto& m : s.c.messages) s.tokens.push_back(td::tok::count_message(m, counter));
  s.total = td::tok::count_conversation(s.c, counter).total;
  return s;
}
Profile on(std::uint64_t budget) {
  Profile p;
  p.trim_middle = true;
  p.trim_middle_budget_tokens = budget;
  return p;
}
}  // namespace

TEST_CASE("trim middle: off by default") {
  Profile p;
  auto s = setup(40, p);
  CHECK(trim_middle(s.c, p, s.wm, 32, s.tokens, s.total).hits == 0);
}

TEST_CASE("trim middle: under the budget nothing is dropped") {
  auto p = on(1'000'000);
  auto s = setup(40, p);
  CHECK(trim_middle(s.c, p, s.wm, 32, s.tokens, s.total).hits == 0);
}

TEST_CASE("trim middle: keeps system, sinks and recent; drops whole turns on the grid; pairs stay") {
  auto p = on(2000);  // the 40-step loop is ~4600 tokens
  auto s = setup(40, p);
  auto st = trim_middle(s.c, p, s.wm, 32, s.tokens, s.total);
  REQUIRE(st.hits > 0);
  const auto& m = s.c.messages;
  CHECK_FALSE(m[0].removed);  // system
  CHECK_FALSE(m[1].removed);  // sink: the task
  CHECK_FALSE(m[2].removed);  // sink: the first call
  CHECK_FALSE(m[3].removed);  // ... and its result
  REQUIRE(m[4].origin == kNewOrigin);
  CHECK(m[4].role == Role::User);
  CHECK(m[4].parts[0].text.find("earlier messages") != std::string::npos);
  // Dropped: whole turns from the sinks to a grid point (a multiple of the step).
  std::size_t kept_tail = 0;
  for (std::size_t i = 5; i < m.size(); ++i)
    if (!m[i].removed) ++kept_tail;
  CHECK(kept_tail >= p.trim_middle_recent_messages);
  auto before = render(s.c);
  CHECK(pairing_repair(s.c).hits == 0);  // nothing orphaned
  CHECK(render(s.c) == before);
  // The first kept message after the cut starts a turn on the grid.
  std::size_t first_kept = 5;
  while (m[first_kept].removed) ++first_kept;
  bool on_grid = false;
  const std::uint32_t step = Profile{}.frontier_step_turns;
  for (std::uint32_t g = step; g <= 32; g += step) on_grid |= s.wm.start_of(g, 1000) + 1 == first_kept;
  CHECK(on_grid);
  CHECK(m[first_kept].role == Role::Assistant);
}

TEST_CASE("trim middle: a cut that would cost more than it removes is not made") {
  // Tiny outputs: the stale turns hold fewer tokens than the notice would.
  Profile p = on(0);
  p.frontier_step_turns = 1;
  p.trim_middle_recent_messages = 2;
  Setup s;
  s.c = agent_loop(4, [](int) { return std::string("ok"); });
  s.wm = working_memory(s.c, p);
  QuarterCounter counter;
  for (const auto& m : s.c.messages) s.tokens.push_back(td::tok::count_message(m, counter));
  s.total = td::tok::count_conversation(s.c, counter).total;
  const std::size_t before = s.c.messages.size();
  CHECK(trim_middle(s.c, p, s.wm, 3, s.tokens, s.total).hits == 0);
  CHECK(s.c.messages.size() == before);
  // The same history with outputs worth cutting is cut.
  auto big = setup(4, p);
  CHECK(trim_middle(big.c, p, big.wm, 3, big.tokens, big.total).hits > 0);
}
