#include <doctest/doctest.h>

#include <algorithm>

#include "pruning/loss_cap.hpp"
#include "pruning_support.hpp"

using namespace td::pruning;
using namespace td::pruning::test;

namespace {

// system, user, then `steps` x (assistant call, tool result): requests end
// before each assistant message (index 2, 4, ...) and at the end.
Conversation loop_of(int steps) {
  return agent_loop(steps, [](int) { return std::string("out"); });
}

std::vector<std::uint64_t> sums(const std::vector<std::uint64_t>& v) {
  std::vector<std::uint64_t> ps(v.size() + 1, 0);
  for (std::size_t i = 0; i < v.size(); ++i) ps[i + 1] = ps[i] + v[i];
  return ps;
}

Profile priced(double max_loss) {
  Profile p;
  p.cache_read_price = 0.1;
  p.cache_write_price = 1.25;
  p.max_loss = max_loss;
  return p;
}

}  // namespace

TEST_CASE("loss cap: the session's earlier requests are the prefixes before each assistant answer") {
  const Conversation c = loop_of(3);  // 8 messages: requests [0,2) [0,4) [0,6) [0,8)
  const std::vector<std::uint64_t> orig(8, 100);
  const auto ps = sums(orig);
  const Profile p = priced(0.1);
  LossCap cap(c, p, ps, ps);
  CHECK(cap.request_ends() == std::vector<std::uint32_t>{2, 4, 6, 8});
  // Without pruning both sides cost the same: 200 written, then 200 read + 200 written, ...
  const LossCap::Totals t = cap.through(8);
  const double expected = 1.25 * 200 + (0.1 * 200 + 1.25 * 200) + (0.1 * 400 + 1.25 * 200) + (0.1 * 600 + 1.25 * 200);
  CHECK(t.without == doctest::Approx(expected));
  CHECK(t.with == doctest::Approx(expected));
}

TEST_CASE("loss cap: a step whose rewrite costs more than the cap allows is refused; a looser cap takes it") {
  const Conversation c = loop_of(3);
  const std::vector<std::uint64_t> orig(8, 100);
  std::vector<std::uint64_t> planned = orig;
  planned[3] = 50;  // the first tool output, pruned, saves 50 tokens
  const auto orig_ps = sums(orig), plan_ps = sums(planned);
  // At the last request (holding [0, 8)): without it costs 0.1 * 600 + 1.25 * 200 = 310;
  // with, messages 3.. are written again: 0.1 * 300 + 1.25 * 450 = 592.5. Through
  // the request: 1.25*200 + 270 + 290 = 810 before, so 1120 without, 1402.5 with (x1.252).
  {
    LossCap cap(c, priced(0.10), orig_ps, plan_ps);
    CHECK_FALSE(cap.allows(3, 4, 8));
  }
  {
    LossCap cap(c, priced(0.26), orig_ps, plan_ps);
    CHECK(cap.allows(3, 4, 8));
    cap.take(3, 4, 8);
    const LossCap::Totals t = cap.through(8);
    CHECK(t.without == doctest::Approx(1120));
    CHECK(t.with == doctest::Approx(1402.5));
  }
}

TEST_CASE("loss cap: after a step every request costs less than without, so the ratio falls back under 1") {
  const Conversation c = loop_of(20);  // requests end at 2, 4, ..., 42
  std::vector<std::uint64_t> orig(c.messages.size(), 100);
  std::vector<std::uint64_t> planned = orig;
  planned[3] = 10;
  const auto orig_ps = sums(orig), plan_ps = sums(planned);
  LossCap cap(c, priced(0.10), orig_ps, plan_ps);
  REQUIRE(cap.allows(3, 4, 6));  // the suffix to write again is short still
  cap.take(3, 4, 6);
  LossCap::Totals prev = cap.through(6);
  CHECK(prev.with > prev.without);
  double prev_ratio = prev.with / prev.without;
  for (std::uint32_t end = 8; end <= 42; end += 2) {
    const LossCap::Totals t = cap.through(end);
    CHECK(t.with - prev.with < t.without - prev.without);    // this request: 90 cached tokens fewer
    CHECK(t.with / t.without <= std::max(prev_ratio, 1.0));  // falls while above 1, never back over it
    prev_ratio = t.with / t.without;
    prev = t;
  }
  CHECK(prev_ratio < 1.0);
  // The same step decided at the last request rewrites 36 messages: refused.
  LossCap late(c, priced(0.10), orig_ps, plan_ps);
  CHECK_FALSE(late.allows(3, 4, 42));
}
