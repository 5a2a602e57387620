// The plan ahead (pruning/lossy_plan.hpp, docs/design.md §Memos and caches):
// a request reports the plan of its grid's next point while the memo lacks
// it; computed then, the request whose grid moves looks it up instead of
// planning, and every request sends what it would have sent without it.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "pruning/lossy_plan.hpp"
#include "pruning/pipeline.hpp"
#include "pruning/tally.hpp"
#include "pruning_support.hpp"

using namespace td::pruning;
using namespace td::pruning::test;

namespace {

// Outputs that differ (no dedupe) and are long enough to be cut.
Conversation session() {
  return agent_loop(24, [](int k) { return numbered_lines(10, "out " + std::to_string(k)); });
}

// The agent's requests: the history before each assistant message.
std::vector<Conversation> requests(const Conversation& whole) {
  std::vector<Conversation> out;
  for (std::size_t i = 1; i < whole.messages.size(); ++i)
    if (whole.messages[i].role == Role::Assistant) {
      Conversation c;
      c.messages.assign(whole.messages.begin(), whole.messages.begin() + static_cast<std::ptrdiff_t>(i));
      out.push_back(std::move(c));
    }
  return out;
}

struct Replayed {
  std::vector<std::vector<std::string>> sent;
  std::vector<std::string> results;
  std::vector<bool> looked_up;  // per request: its plan came from the memo
  int due = 0;                  // requests that reported a plan ahead
};

Replayed replay(const Profile& p, PipelineCaches* caches, bool ahead) {
  Replayed out;
  const CachedQuarterCounter counter;
  for (const Conversation& request : requests(session())) {
    Conversation c = request;
    const std::uint64_t hits = caches ? caches->plans.hits() : 0;
    const PipelineResult r = prune(c, p, counter, caches);
    out.sent.push_back(dump(c));
    out.results.push_back(dump(r));
    // Each request looks its own plan up first, then (with caches) the next
    // point's: a hit on either counts, and only plans ahead put the next
    // point's in the memo before its request.
    out.looked_up.push_back(caches && caches->plans.hits() > hits);
    if (r.ahead.due()) {
      ++out.due;
      if (ahead) plan_ahead(request, r.ahead, Tally(counter, &caches->counts), *caches);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("plan ahead: the request whose grid moves finds its plan, and every request sends the same") {
  const Profile p = stepping_profile();
  const Replayed reference = replay(p, nullptr, false);
  PipelineCaches without_cache, with_cache;
  const Replayed memo_only = replay(p, &without_cache, false);
  const Replayed planned_ahead = replay(p, &with_cache, true);
  CHECK(planned_ahead.sent == reference.sent);
  CHECK(planned_ahead.results == reference.results);
  CHECK(memo_only.sent == reference.sent);
  CHECK(planned_ahead.due > 3);
  // Once the first plan is made, every later request of the session finds its
  // plan in the memo; without the plans ahead, each request whose grid moved
  // planned anew.
  std::size_t first = 0;
  while (first < planned_ahead.looked_up.size() && !planned_ahead.looked_up[first]) ++first;
  REQUIRE(first < planned_ahead.looked_up.size());
  int misses_ahead = 0, misses_memo_only = 0;
  for (std::size_t i = first; i < planned_ahead.looked_up.size(); ++i) {
    misses_ahead += !planned_ahead.looked_up[i];
    misses_memo_only += !memo_only.looked_up[i];
  }
  CHECK(misses_ahead == 0);
  CHECK(misses_memo_only >= 3);
}

TEST_CASE("plan ahead: none is due once the memo holds it, nor for a block not yet whole") {
  const Profile p = stepping_profile();
  const CachedQuarterCounter counter;
  PipelineCaches caches;
  const std::vector<Conversation> all = requests(session());
  // A request late enough to have a grid, with its next point's turns here.
  Conversation c = all[12];
  const Conversation as_sent = c;
  const PipelineResult r = prune(c, p, counter, &caches);
  REQUIRE(r.ahead.due());
  CHECK(r.ahead.limit < as_sent.messages.size());
  plan_ahead(as_sent, r.ahead, Tally(counter, &caches.counts), caches);
  Conversation again = as_sent;
  CHECK_FALSE(prune(again, p, counter, &caches).ahead.due());
  // Found once, it is remembered as found: the requests after look up their
  // own plan only, not the next one's key again.
  const std::uint64_t lookups = caches.plans.hits() + caches.plans.misses();
  Conversation third = as_sent;
  CHECK_FALSE(prune(third, p, counter, &caches).ahead.due());
  CHECK(caches.plans.hits() + caches.plans.misses() == lookups + 1);
  // Without caches nothing is reported: there is no memo to fill.
  Conversation bare = as_sent;
  CHECK_FALSE(prune(bare, p, counter).ahead.due());
}
