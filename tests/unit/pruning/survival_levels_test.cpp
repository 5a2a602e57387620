// Survival's compression levels (pruning/pipeline.hpp): each cuts at least
// as much as the one before, each renders stably (the same history at the
// same level gives the same bytes), and consecutive requests of a session
// at one level keep sharing their prefix.
#include <doctest/doctest.h>

#include <string>

#include "pruning/pipeline.hpp"
#include "pruning_support.hpp"

using namespace td::pruning;
using namespace td::pruning::test;

namespace {

Conversation session(int steps) {
  return agent_loop(steps, [](int k) {
    std::string out;
    for (int i = 0; i < 60; ++i) out += "step " + std::to_string(k) + " line " + std::to_string(i * 7919) + "\n";
    return out;
  });
}

struct Run {
  PipelineResult result;
  std::vector<std::string> sent;
};

Run at(Level level, int steps, const Profile& p) {
  Conversation c = session(steps);
  const QuarterCounter counter;
  const Counted counted = count_tokens(c, counter);
  Decision d{Mode::Survival, {&p, true, level}, {}};
  Run r{run_pipeline(c, counted, d, counter), {}};
  r.sent = render(c);
  return r;
}

std::string notice_of(const Run& r) {
  for (const std::string& m : r.sent)
    if (m.find("earlier messages") != std::string::npos) return m;
  return {};
}

}  // namespace

TEST_CASE("survival levels: each cuts at least as much as the one before") {
  const Profile p;
  for (int steps : {4, 12, 30, 60}) {
    CAPTURE(steps);
    const Run diet = at(Level::Standard, steps, p), window = at(Level::Window, steps, p),
              middle = at(Level::DropMiddle, steps, p);
    CHECK(window.result.tokens_after <= diet.result.tokens_after);
    CHECK(middle.result.tokens_after <= window.result.tokens_after);
    if (steps >= 30) {
      CHECK(window.result.tokens_after < diet.result.tokens_after);
      CHECK(middle.result.tokens_after < window.result.tokens_after);
      CHECK(!notice_of(middle).empty());
    }
    // The system message and the task (the attention sinks) and the last
    // turns are kept at every level.
    for (const Run* r : {&window, &middle}) {
      CHECK(r->sent.front() == diet.sent.front());
      CHECK(r->sent[1] == diet.sent[1]);
      CHECK(r->sent.back() == diet.sent.back());
    }
  }
}

TEST_CASE("survival levels: the same history at the same level gives the same bytes") {
  const Profile p;
  for (Level level : {Level::Window, Level::DropMiddle}) {
    const Run a = at(level, 40, p), b = at(level, 40, p);
    CHECK(a.sent == b.sent);
  }
}

TEST_CASE("survival levels: consecutive requests at one level share their prefix") {
  Profile p;
  p.frontier_step_turns = 8;  // the grid the middle's cut moves on
  // The frontier at the working-memory window: what was stale stays as it was.
  for (int steps = 20; steps < 44; ++steps) {
    CAPTURE(steps);
    const Run now = at(Level::Window, steps, p), next = at(Level::Window, steps + 1, p);
    REQUIRE(now.result.stale_messages > 0);
    for (std::uint32_t i = 0; i < now.result.stale_messages; ++i) CHECK(now.sent[i] == next.sent[i]);
  }
  // Dropping the middle moves in steps of the grid: the notice changes at
  // most once per 8 turns.
  int changes = 0;
  std::string last = notice_of(at(Level::DropMiddle, 20, p));
  for (int steps = 21; steps < 45; ++steps) {
    const std::string n = notice_of(at(Level::DropMiddle, steps, p));
    if (n != last) ++changes;
    last = n;
  }
  CHECK(changes <= 3);
}
