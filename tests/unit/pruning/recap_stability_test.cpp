// The recap through the whole pipeline, request by request of a growing
// session (docs/design.md §Policy, Standard's recap): weighed on the requests
// as the diet sent them, it stays once made and keeps its bytes while its cut
// stays, and it is the same at the standard level and at survival's levels
// that do not trim the middle.
#include <doctest/doctest.h>

#include <string>

#include "pruning/pipeline.hpp"
#include "pruning/strategies/recap.hpp"
#include "pruning_support.hpp"
#include "replay_trajectory.hpp"
#include "recap_support.hpp"

using namespace td::pruning;
using namespace td::pruning::test;

namespace {

// The recap message of `c` as rendered ("" without one).
std::string recap_of(const Conversation& c) {
  for (const std::string& m : render(c))
    if (m.find(kRecapMarker) != std::string::npos) return m;
  return {};
}

}  // namespace

TEST_CASE("recap stability: once made it stays, the same bytes until its cut moves") {
  // A frontier step makes a request smaller than the one before it: the
  // recap must not go with it (it would come back later, rewriting the
  // cached prefix twice).
  for (const char* name : kLongest) {
    for (const std::uint64_t threshold : {std::uint64_t{10000}, kThreshold, std::uint64_t{20000}}) {
      CAPTURE(name);
      CAPTURE(threshold);
      const Conversation full = trajectory(name);
      const Profile p = recap_profile(threshold);
      const QuarterCounter counter;
      std::string last;
      std::uint32_t recapped = 0, moves = 0;
      for (std::size_t n : request_ends(full)) {
        Conversation c = prefix(full, n);
        prune(c, p, counter);
        const std::string now = recap_of(c);
        if (!last.empty()) CHECK_FALSE(now.empty());
        if (!last.empty() && now != last) ++moves;
        recapped += !now.empty();
        last = now;
      }
      CHECK(recapped > 0);
      CHECK(moves * 4 < recapped);  // large steps: the same bytes between them
    }
  }
}

TEST_CASE("recap stability: the same recap at the standard level and at survival's window level") {
  for (const char* name : {"mini-swe-agent-10", "mini-swe-agent-6"}) {
    CAPTURE(name);
    const Conversation full = trajectory(name);
    const Profile p = recap_profile(kThreshold);
    const QuarterCounter counter;
    std::uint32_t recapped = 0;
    for (std::size_t n : request_ends(full)) {
      CAPTURE(n);
      Conversation standard = prefix(full, n), window = standard;
      const Counted counted = count_tokens(standard, counter);
      run_pipeline(standard, counted, Decision{Mode::Standard, {&p, true, Level::Standard}, {}}, counter);
      run_pipeline(window, counted, Decision{Mode::Survival, {&p, true, Level::Window}, {}}, counter);
      CHECK(recap_of(standard) == recap_of(window));
      recapped += !recap_of(standard).empty();
    }
    CHECK(recapped > 0);
  }
}
