// The recap through the diet (diet/diet.hpp): the task is restated
// on the requests where the recap's cut moves and not on the others that
// carry it, and the model's context window (the profile's, else the known
// one) makes a recap that would not pay be taken.
#include <doctest/doctest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <string>
#include <string_view>

#include "config/config.hpp"
#include "diet/diet.hpp"
#include "pruning/reanchor.hpp"
#include "pruning/strategies/recap.hpp"
#include "trajectory_body.hpp"

using namespace td::diet;
using td::test::prefix_body;
using td::test::trajectory;

namespace {

bool fired(const DietOutcome& d, std::string_view name) {
  return std::find(d.result.fired.begin(), d.result.fired.end(), name) != d.result.fired.end();
}

// The recap's header up to its message range: it names where the cut stands.
std::string recap_range(const std::string& body) {
  const auto at = body.find(td::pruning::kRecapMarker);
  if (at == std::string::npos) return {};
  return body.substr(at, body.find(')', at) - at);
}

td::config::Config with(td::pruning::Profile p) {
  td::config::Config cfg;
  cfg.profiles.push_back(std::move(p));
  return cfg;
}

}  // namespace

TEST_CASE("diet: the task is restated on the requests where the recap moves, not on every one carrying it") {
  const rapidjson::Document t = trajectory("mini-swe-agent-12.json");
  td::pruning::Profile p;
  p.token_threshold = 30000;
  const td::config::Config cfg = with(p);
  DietCaches caches;
  const auto& msgs = t["messages"];
  std::string last_range;
  int steps = 0, carried = 0;
  for (rapidjson::SizeType e = 1; e < msgs.Size(); ++e) {
    if (std::string_view(msgs[e]["role"].GetString()) != "assistant" ||
        std::string_view(msgs[e - 1]["role"].GetString()) == "assistant")
      continue;
    std::string body = prefix_body(t, e, "gpt-4o");
    const DietOutcome d = diet_body({}, body, cfg, caches);
    REQUIRE(d.parsed);
    const std::string range = recap_range(body);
    CHECK(fired(d, "recap") == !range.empty());
    if (range.empty()) continue;
    const bool moved = range != last_range;
    CAPTURE(range);
    CHECK(fired(d, kReanchorStat) == moved);
    CHECK((body.find(td::pruning::kReanchorMarker) != std::string::npos) == moved);
    (moved ? steps : carried) += 1;
    last_range = range;
  }
  CHECK(steps >= 1);
  CHECK(carried > steps);
}

TEST_CASE("diet: a request over the model's window is recapped below the threshold, even when it would not pay") {
  const rapidjson::Document t = trajectory("mini-swe-agent-12.json");
  const std::size_t n = t["messages"].Size() - 1;
  td::pruning::Profile p;
  p.token_threshold = 1'000'000'000;
  p.cache_write_price = 100;  // no step pays
  struct Row {
    const char* model;
    std::uint64_t context_window;
    bool recapped;
  };
  const Row rows[] = {
      {"gpt-4o", 0, false},            // 128k known: it fits
      {"gpt-4-0613", 0, true},         // 8k known: it does not
      {"mystery-model", 0, false},     // no window known
      {"mystery-model", 20000, true},  // the profile's
  };
  for (const Row& row : rows) {
    CAPTURE(row.model);
    CAPTURE(row.context_window);
    p.context_window = row.context_window;
    const td::config::Config cfg = with(p);
    DietCaches caches;
    std::string body = prefix_body(t, n, row.model);
    const DietOutcome d = diet_body({}, body, cfg, caches);
    REQUIRE(d.parsed);
    CHECK(fired(d, "recap") == row.recapped);
    CHECK((body.find(td::pruning::kRecapMarker) != std::string::npos) == row.recapped);
  }
}
