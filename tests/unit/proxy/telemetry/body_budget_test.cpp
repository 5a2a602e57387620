// The budget of big request bodies in flight: what fits goes, the rest waits
// in order, a body over the whole budget goes alone, a waiter that gives up
// takes nothing (or gives back what was taken for it meanwhile).
#include <doctest/doctest.h>

#include <memory>

#include "proxy/telemetry/body_budget.hpp"

using namespace td::proxy;

namespace {

// A waiter as a session arms it: resumed means its bytes were taken.
std::shared_ptr<ResumeHandle> waiter(bool& woken) {
  auto h = std::make_shared<ResumeHandle>();
  h->arm([&woken] { woken = true; });
  return h;
}

}  // namespace

TEST_CASE("body budget: bodies that fit go; the next waits until enough comes back, in order") {
  BodyBudget budget;
  bool w1 = false, w2 = false, w3 = false;
  CHECK(budget.take(40, 100, waiter(w1)));
  CHECK(budget.take(40, 100, waiter(w1)));
  auto h2 = waiter(w2), h3 = waiter(w3);
  CHECK_FALSE(budget.take(40, 100, h2));  // 120 > 100
  CHECK_FALSE(budget.take(10, 100, h3));  // would fit, but nobody overtakes a waiter
  CHECK(budget.waiting() == 2);
  CHECK(budget.in_flight() == 80);
  budget.give_back(40);
  CHECK(w2);
  CHECK(w3);  // 40 + 40 + 10 fit
  CHECK(budget.in_flight() == 90);
  CHECK(budget.waiting() == 0);
  CHECK(w1 == false);
}

TEST_CASE("body budget: a body over the whole budget goes when nothing else is in flight; 0 is no limit") {
  BodyBudget budget;
  bool w = false;
  CHECK(budget.take(500, 100, waiter(w)));
  auto h = waiter(w);
  CHECK_FALSE(budget.take(10, 100, h));
  budget.give_back(500);
  CHECK(w);
  budget.give_back(10);
  CHECK(budget.in_flight() == 0);
  CHECK(budget.take(1000, 0, waiter(w)));
  CHECK(budget.take(1000, 0, waiter(w)));
}

TEST_CASE("body budget: a waiter that gives up takes nothing; one admitted as it gave up gives its bytes back") {
  BodyBudget budget;
  bool w = false;
  CHECK(budget.take(80, 100, waiter(w)));
  bool w2 = false, w3 = false;
  auto h2 = waiter(w2), h3 = waiter(w3);
  CHECK_FALSE(budget.take(50, 100, h2));
  CHECK_FALSE(budget.take(20, 100, h3));
  // h2 times out: cancelled, then withdrawn while still queued. h3, which
  // fits once h2 is gone, goes at once.
  h2->cancel();
  CHECK_FALSE(budget.withdraw(h2));
  CHECK(w3);
  CHECK(budget.in_flight() == 100);
  // A waiter cancelled just as the bytes came back: admitted (bytes taken,
  // its resume a no-op); its withdraw() says so, and its caller gives back.
  bool w4 = false;
  auto h4 = waiter(w4);
  CHECK_FALSE(budget.take(30, 100, h4));
  h4->cancel();
  budget.give_back(80);
  CHECK_FALSE(w4);
  CHECK(budget.withdraw(h4));
  budget.give_back(30);
  budget.give_back(20);
  CHECK(budget.in_flight() == 0);
  CHECK(budget.waiting() == 0);
}
