// `tokendiet usage --compare`'s figures: a table of sessions with known
// sums gives the known figures; the bootstrap is deterministic; and its 95 %
// intervals cover the true difference in at least 90 of 100 simulated
// experiments.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "ledger/arm_comparison.hpp"

using namespace td::ledger;

namespace {

SessionSums session(std::string unit, std::string model, std::string arm, std::int64_t requests, double cost,
                    std::int64_t rereads = 0, std::int64_t recalls = 0, std::int64_t context_errors = 0,
                    std::int64_t rate_limited = 0) {
  SessionSums s;
  s.unit = std::move(unit);
  s.model = std::move(model);
  s.arm = std::move(arm);
  s.requests = requests;
  s.cost_usd = cost;
  s.rereads = rereads;
  s.recall_rounds = recalls;
  s.context_errors = context_errors;
  s.rate_limited = rate_limited;
  return s;
}

const Interval& fig(const std::array<Interval, kArmFigures>& a, ArmFigure f) { return a[std::size_t(f)]; }

const td::config::Price kPriceB{"b*", 2.0, 1.0, 4.0, 8.0};
const PriceLookup kPrices = [](std::string_view model) -> const td::config::Price* {
  return model.starts_with("b") ? &kPriceB : nullptr;
};

// A fixed sequence for the simulation (splitmix64, Box-Muller): the same draws
// on every standard library.
struct Draws {
  std::uint64_t state;
  double unit() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (double((z ^ (z >> 31)) >> 11) + 0.5) * 0x1.0p-53;
  }
  double normal() { return std::sqrt(-2 * std::log(unit())) * std::cos(6.283185307179586 * unit()); }
};

}  // namespace

TEST_CASE("compare: a ledger's known sessions give the known figures, per model and in total") {
  SessionSums priced_now = session("k:t1", "b-model", "treatment", 2, 0.3);
  priced_now.unpriced = 2;  // rows not priced when written, priced now: 0.8 + 0.5 + 0.4
  priced_now.prompt = 1'000'000;
  priced_now.cached_read = 500'000;
  priced_now.cache_write = 100'000;
  SessionSums never_priced = session("k:c1", "c-model", "control", 2, 0.0);
  never_priced.unpriced = 2;
  const std::vector<SessionSums> sessions = {
      session("k:t1", "a", "treatment", 10, 1.0, 1, 2, 0, 0),
      session("k:t2", "a", "treatment", 10, 1.0, 1, 0, 0, 1),
      session("k:t3", "a", "treatment", 20, 2.0, 0, 0, 1, 0),
      session("k:t4", "a", "treatment", 20, 2.0, 2, 2, 0, 0),
      session("k:c1", "a", "control", 10, 2.0),
      session("k:c2", "a", "control", 30, 4.0, 1, 0, 0, 0),
      priced_now,
      never_priced,
  };
  const ArmComparison c = compare_arms(sessions, kPrices);
  REQUIRE(c.groups.size() == 3);
  const ArmGroup& a = c.groups[0];
  CHECK(a.key == "a");
  CHECK(a.treatment.sessions == 4);
  CHECK(a.control.sessions == 2);
  CHECK(a.treatment.requests == 60);
  CHECK(a.treatment.cost_usd == doctest::Approx(6.0));
  CHECK(fig(a.treatment_figures, ArmFigure::RequestsPerSession).value == doctest::Approx(15));
  CHECK(fig(a.treatment_figures, ArmFigure::CostPerSession).value == doctest::Approx(1.5));
  CHECK(fig(a.treatment_figures, ArmFigure::CostPerRequest).value == doctest::Approx(0.1));
  CHECK(fig(a.treatment_figures, ArmFigure::RereadsPer100).value == doctest::Approx(400.0 / 60));
  CHECK(fig(a.treatment_figures, ArmFigure::RecallsPer100).value == doctest::Approx(400.0 / 60));
  CHECK(fig(a.treatment_figures, ArmFigure::ContextErrorsPer100).value == doctest::Approx(100.0 / 60));
  CHECK(fig(a.treatment_figures, ArmFigure::RateLimitedPer100).value == doctest::Approx(100.0 / 60));
  CHECK(fig(a.control_figures, ArmFigure::RequestsPerSession).value == doctest::Approx(20));
  CHECK(fig(a.control_figures, ArmFigure::CostPerSession).value == doctest::Approx(3.0));
  CHECK(fig(a.control_figures, ArmFigure::CostPerRequest).value == doctest::Approx(0.15));
  CHECK(fig(a.control_figures, ArmFigure::RereadsPer100).value == doctest::Approx(2.5));
  CHECK(fig(a.difference, ArmFigure::RequestsPerSession).value == doctest::Approx(-25));
  CHECK(fig(a.difference, ArmFigure::CostPerSession).value == doctest::Approx(-50));
  CHECK(fig(a.difference, ArmFigure::CostPerRequest).value == doctest::Approx(-100.0 / 3));
  CHECK(fig(a.difference, ArmFigure::RereadsPer100).value == doctest::Approx(400.0 / 60 - 2.5));
  for (std::size_t f = 0; f < kArmFigures; ++f) {
    CAPTURE(arm_figure_name(ArmFigure(f)));
    for (const Interval* i : {&a.treatment_figures[f], &a.control_figures[f], &a.difference[f]}) {
      REQUIRE(i->known);
      CHECK(i->low <= i->value + 1e-9);
      CHECK(i->value <= i->high + 1e-9);
    }
  }

  // Model b: one session, priced now; model c: no price then or now.
  const ArmGroup& b = c.groups[1];
  CHECK(b.key == "b-model");
  CHECK(b.treatment.cost_usd == doctest::Approx(2.0));
  CHECK(b.treatment.unpriced_requests == 0);
  CHECK_FALSE(fig(b.difference, ArmFigure::CostPerSession).known);
  CHECK(b.sentence.starts_with("Not enough sessions to compare (1 treatment and 0 control sessions"));
  CHECK(c.groups[2].control.unpriced_requests == 2);

  // The total: a session's models together (t1 is one session of 12 requests).
  CHECK(c.total.treatment.sessions == 4);
  CHECK(c.total.control.sessions == 2);
  CHECK(c.total.treatment.requests == 62);
  CHECK(fig(c.total.treatment_figures, ArmFigure::CostPerSession).value == doctest::Approx(2.0));
  CHECK(fig(c.total.control_figures, ArmFigure::RequestsPerSession).value == doctest::Approx(21));
  CHECK(fig(c.total.difference, ArmFigure::CostPerSession).value == doctest::Approx(2.0 / 3.0 * 100 - 100));
  CHECK(c.total.control.unpriced_requests == 2);
  CHECK(c.total.sentence.find("Costs leave out 2 requests without a price.") != std::string::npos);

  // The same ledger, the same intervals.
  const ArmComparison again = compare_arms(sessions, kPrices);
  for (std::size_t f = 0; f < kArmFigures; ++f) {
    CHECK(again.total.difference[f].low == c.total.difference[f].low);
    CHECK(again.total.difference[f].high == c.total.difference[f].high);
  }
}

TEST_CASE("compare: several ledgers' sums of one session are one session") {
  const std::vector<SessionSums> one = {session("k:x", "a", "control", 3, 0.5, 1)};
  const std::vector<SessionSums> two = {session("k:x", "a", "control", 2, 0.25, 1),
                                        session("k:y", "a", "treatment", 1, 0.1)};
  const std::vector<SessionSums> merged = merge_session_sums({one, two});
  REQUIRE(merged.size() == 2);
  CHECK(merged[0] == session("k:x", "a", "control", 5, 0.75, 2));
  CHECK(merged[1] == session("k:y", "a", "treatment", 1, 0.1));
}

TEST_CASE("compare: a clear difference is resolved, none is not, in a sentence") {
  std::vector<SessionSums> clear, none;
  Draws d{7};
  for (int i = 0; i < 60; ++i) {
    const double noise = 1 + 0.1 * d.normal();
    clear.push_back(session("k:t" + std::to_string(i), "m", "treatment", 10, 1.0 * noise));
    clear.push_back(session("k:c" + std::to_string(i), "m", "control", 10, 2.0 * noise));
    none.push_back(session("k:t" + std::to_string(i), "m", "treatment", 10, 1.0 + 0.3 * d.normal()));
    none.push_back(session("k:c" + std::to_string(i), "m", "control", 10, 1.0 + 0.3 * d.normal()));
  }
  const ArmComparison resolved = compare_arms(clear, kPrices);
  CHECK(resolved.total.sentence.starts_with(
      "Resolved: the treatment's effective input cost per session is 50.0 % lower"));
  const ArmComparison unresolved = compare_arms(none, kPrices);
  const Interval& diff = fig(unresolved.total.difference, ArmFigure::CostPerSession);
  REQUIRE(diff.known);
  CHECK(diff.low < 0);
  CHECK(diff.high > 0);
  CHECK(unresolved.total.sentence.starts_with("Not resolved:"));
}

TEST_CASE("compare: the intervals cover the true difference in at least 90 of 100 simulated experiments") {
  // Sessions of 5 to 40 requests; each session's cost per request drawn
  // around the arm's rate (log-normal, sd 0.5): the treatment's rate is 0.8
  // of the control's, so its cost per session and per request are truly 20 %
  // lower, and requests per session truly the same.
  int cost_covered = 0, per_request_covered = 0, requests_covered = 0;
  for (int sim = 0; sim < 100; ++sim) {
    Draws d{0x5eed0000ull + std::uint64_t(sim)};
    std::vector<SessionSums> sessions;
    for (int i = 0; i < 120; ++i)
      for (const char* arm : {"treatment", "control"}) {
        const std::int64_t requests = 5 + std::int64_t(d.unit() * 36);
        const double rate = (arm[0] == 't' ? 0.8 : 1.0) * std::exp(0.5 * d.normal() - 0.125);
        sessions.push_back(session(std::string(arm) + std::to_string(i), "m", arm, requests, double(requests) * rate));
      }
    const ArmComparison c = compare_arms(sessions, kPrices, {.resamples = 1000, .seed = 42});
    auto covers = [&](ArmFigure f, double truth) {
      const Interval& i = fig(c.total.difference, f);
      return i.known && i.low <= truth && truth <= i.high;
    };
    cost_covered += covers(ArmFigure::CostPerSession, -20);
    per_request_covered += covers(ArmFigure::CostPerRequest, -20);
    requests_covered += covers(ArmFigure::RequestsPerSession, 0);
  }
  CHECK(cost_covered >= 90);
  CHECK(per_request_covered >= 90);
  CHECK(requests_covered >= 90);
  MESSAGE("covered: cost per session " << cost_covered << ", per request " << per_request_covered
                                       << ", requests per session " << requests_covered << " of 100");
}
