#include <doctest/doctest.h>

#include "cli/replay.hpp"

using namespace td::cli;

TEST_CASE("openai pricing: cached only from 1024 shared tokens on, in 128-token steps, at 0.1x") {
  CHECK(request_cost(Pricing::OpenAI, 5000, 0) == doctest::Approx(5000));
  CHECK(request_cost(Pricing::OpenAI, 5000, 1023) == doctest::Approx(5000));
  CHECK(request_cost(Pricing::OpenAI, 5000, 1024) == doctest::Approx(5000 - 1024 + 102.4));
  CHECK(request_cost(Pricing::OpenAI, 5000, 1151) == doctest::Approx(5000 - 1024 + 102.4));
  CHECK(request_cost(Pricing::OpenAI, 5000, 1152) == doctest::Approx(5000 - 1152 + 115.2));
  CHECK(request_cost(Pricing::OpenAI, 5000, 9999) == doctest::Approx(5000 - 4992 + 499.2));  // 1024 + 31*128
}

TEST_CASE("anthropic pricing: reads at 0.1x, the rest written at 1.25x") {
  CHECK(request_cost(Pricing::Anthropic, 5000, 0) == doctest::Approx(6250));
  CHECK(request_cost(Pricing::Anthropic, 5000, 4000) == doctest::Approx(400 + 1250));
  CHECK(request_cost(Pricing::Anthropic, 100, 100) == doctest::Approx(10));
}

TEST_CASE("percentiles are nearest-rank") {
  Report r;
  for (int i = 1; i <= 100; ++i) r.pipeline_ms.push_back(i);
  CHECK(r.percentile_ms(50) == 50);
  CHECK(r.percentile_ms(99) == 99);
  r.pipeline_ms = {3};
  CHECK(r.percentile_ms(99) == 3);
}

TEST_CASE("the worst cumulative cost ratio is taken at every request boundary") {
  Report r;
  r.add_request_cost(100, 100);  // 1.0
  r.add_request_cost(100, 150);  // 250 / 200 = 1.25: a session that stopped here lost 25 %
  r.add_request_cost(100, 10);   // 260 / 300
  r.add_request_cost(100, 10);   // 270 / 400
  CHECK(r.cost_without == doctest::Approx(400));
  CHECK(r.cost_with == doctest::Approx(270));
  CHECK(r.worst_ratio == doctest::Approx(1.25));
  CHECK(r.losing == 1);
  Report total;
  Report other;
  other.add_request_cost(100, 105);
  total.add(r);
  total.add(other);
  CHECK(total.worst_ratio == doctest::Approx(1.25));
  CHECK(total.losing == 2);
  CHECK(Report{}.worst_ratio == 1.0);  // nothing lost before any request
}
