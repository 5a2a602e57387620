// Recalled lines stay (docs/design.md §Recall): the lines a session's model
// recalled are kept in the cut of their text on its later requests, and
// nothing else about a cut changes.
#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "pruning/pipeline_caches.hpp"
#include "pruning/recalled_lines.hpp"
#include "pruning/snip.hpp"
#include "pruning/strategies/stale_tool_outputs.hpp"
#include "pruning/text.hpp"
#include "pruning_support.hpp"

using namespace td::pruning;
using namespace td::pruning::test;

namespace {

std::string listing(int k, int lines) {
  std::string s;
  for (int i = 1; i <= lines; ++i)
    s += "file " + std::to_string(k) + " line " + std::to_string(i) + ": value = compute(" + std::to_string(i * 31) +
         ")\n";
  return s;
}

std::string line_of(const std::string& text, std::size_t n) { return std::string(text::lines(text)[n - 1]); }

}  // namespace

TEST_CASE("recalled lines: ranges merge per handle, entries round-trip, the first adds count") {
  RecalledLines r;
  CHECK(r.empty());
  CHECK(r.fingerprint() == 0);
  CHECK(r.add("t0000abcd", 41, 60));
  CHECK(r.add("t0000abcd", 10, 20));
  CHECK(r.add("t0000abcd", 61, 70));  // touches 41-60: joined
  CHECK(r.add("t12345678", 5, 5));
  CHECK_FALSE(r.add("td-0123", 1, 2));    // an archive id is not a handle
  CHECK_FALSE(r.add("t0000abcd", 9, 3));  // empty
  CHECK_FALSE(r.add("t0000abcd", 0, 3));  // lines are 1-based
  CHECK_FALSE(r.add("t0000ABCD", 1, 3));  // handles are lower-case hex
  using P = std::vector<std::pair<std::size_t, std::size_t>>;
  CHECK(r.of(0xabcd) == P{{10, 20}, {41, 70}});
  CHECK(r.of(0x12345678) == P{{5, 5}});
  CHECK(r.of(1).empty());
  CHECK(r.fingerprint(0xabcd) != r.fingerprint(0x12345678));
  CHECK(r.fingerprint(1) == 0);
  const RecalledLines::Range x{0xabcd, 41, 60};
  CHECK(RecalledLines::entry(x) == "t0000abcd:41-60");
  CHECK(RecalledLines::parse_entry("t0000abcd:41-60") == x);
  CHECK_FALSE(RecalledLines::parse_entry("t0000abcd:41").has_value());
  CHECK_FALSE(RecalledLines::parse_entry("t0000abcd:a-b").has_value());
  // Bounded: once kMaxAdds ranges were added, later ones are refused (a form
  // once widened never narrows again).
  RecalledLines full;
  for (std::uint32_t i = 0; i < RecalledLines::kMaxAdds; ++i) CHECK(full.add("t00000001", 10 * i + 1, 10 * i + 2));
  CHECK_FALSE(full.add("t00000002", 1, 2));
  CHECK(full.of(2).empty());
}

TEST_CASE("recalled lines: a snip keeps the lines of its ranges, the gaps around them named") {
  const std::string text = listing(1, 200);
  const std::vector<std::pair<std::size_t, std::size_t>> ranges{{90, 92}, {150, 150}};
  SnipOptions o{.head_bytes = 200, .tail_bytes = 200, .max_error_lines = 0, .recall = true};
  const std::string plain = snip_text(text, o);
  o.keep_ranges = &ranges;
  const std::string kept = snip_text(text, o);
  for (std::size_t n : {90, 91, 92, 150}) {
    CHECK(plain.find(line_of(text, n)) == std::string::npos);
    CHECK(kept.find(line_of(text, n)) != std::string::npos);
  }
  CHECK(kept.find(line_of(text, 93)) == std::string::npos);
  const std::string h = recall_handle(text);
  CHECK(kept.find(" " + h + ":93-149 hidden]") != std::string::npos);
  CHECK(kept.find(":151-") != std::string::npos);
}

TEST_CASE("recalled lines: a stale output keeps what was recalled of it; every other form is as before") {
  auto make = [] { return agent_loop(3, [](int k) { return listing(k, 200); }); };
  Profile p;
  p.recalled_lines = "answered";
  auto plain = make();
  const std::string original = plain.messages[3].parts[0].text;
  const std::string handle = recall_handle(original);
  REQUIRE(stale_tool_outputs(plain, p, 8).hits == 3);

  RecalledLines r;
  REQUIRE(r.add(handle, 120, 124));
  REQUIRE(r.add("t0badf00d", 1, 200));  // a text no request holds: changes nothing
  auto with = make();
  REQUIRE(stale_tool_outputs(with, p, 8, nullptr, nullptr, &r).hits == 3);
  const std::string& cut = with.messages[3].parts[0].text;
  for (std::size_t n = 120; n <= 124; ++n) CHECK(cut.find(line_of(original, n)) != std::string::npos);
  CHECK(plain.messages[3].parts[0].text.find(line_of(original, 120)) == std::string::npos);
  CHECK(cut.size() < original.size());
  CHECK(with.messages[5].parts[0].text == plain.messages[5].parts[0].text);
  CHECK(with.messages[7].parts[0].text == plain.messages[7].parts[0].text);

  // No recalled lines, or none of this session's texts: byte for byte as before.
  RecalledLines none;
  auto again = make();
  stale_tool_outputs(again, p, 8, nullptr, nullptr, &none);
  CHECK(render(again) == render(plain));
  // recalled_lines: off (the default) keeps nothing.
  auto off = make();
  stale_tool_outputs(off, Profile{}, 8, nullptr, nullptr, &r);
  CHECK(render(off) == render(plain));
}

TEST_CASE("recalled lines: through the pipeline and its memos, the same bytes as computed afresh") {
  auto make = [] { return agent_loop(12, [](int k) { return listing(k, 150); }); };
  Profile p = stepping_profile();
  p.low_entropy = false;  // the listing's lines are alike: a fold would name them first
  p.recalled_lines = "answered";
  PipelineCaches caches;
  const CachedQuarterCounter counter;
  auto first = make();
  prune(first, p, counter, &caches);
  const std::string original = make().messages[3].parts[0].text;
  REQUIRE(first.messages[3].parts[0].text.size() < original.size());

  auto recalled = std::make_shared<RecalledLines>();
  REQUIRE(recalled->add(recall_handle(original), 70, 75, 0));
  // Recalled at a frontier the history has not passed yet: not applied.
  auto later = std::make_shared<RecalledLines>();
  REQUIRE(later->add(recall_handle(original), 70, 75, 1000));
  auto run = [&](PipelineCaches* c, std::shared_ptr<RecalledLines> lines = nullptr) {
    auto conv = make();
    const Counted counted = count_tokens(conv, counter, c);
    Decision d = decide(counted, p);
    d.settings.recalled = lines ? lines : recalled;
    run_pipeline(conv, counted, d, counter, c);
    return conv;
  };
  const Conversation memoized = run(&caches);  // the plan without them is in the memo
  const Conversation fresh = run(nullptr);
  CHECK(render(memoized) == render(fresh));
  CHECK(memoized.messages[3].parts[0].text.find(line_of(original, 72)) != std::string::npos);
  CHECK(first.messages[3].parts[0].text.find(line_of(original, 72)) == std::string::npos);
  CHECK(render(run(&caches, later)) == render(first));
  // The other messages' forms are unchanged.
  for (std::size_t i = 5; i < fresh.messages.size(); ++i) CHECK(render(fresh.messages[i]) == render(first.messages[i]));
}
