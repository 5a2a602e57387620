// The plan memo (pruning/lossy_plan.hpp) changes how fast the pipeline runs,
// never what it decides: a request whose plan inputs differ from a memoized
// one in any single field the strategies read gets its own plan, and a
// resent history gets the stored one.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "pruning/lossy_plan.hpp"
#include "pruning/pipeline.hpp"
#include "pruning/strategy_order.hpp"
#include "pruning_support.hpp"

using namespace td::pruning;
using namespace td::pruning::test;

namespace {

// An agent loop with unsigned and signed thinking, an opaque part, an output
// repeated later (deduplicated against the first call's id), ending on an
// answer.
Conversation base() {
  Conversation c =
      agent_loop(10, [](int k) { return numbered_lines(12, "out " + std::to_string(k % 3 == 0 ? 0 : k)); });
  c.messages[2].parts.insert(c.messages[2].parts.begin(), thinking_part(std::string(300, 'r')));
  c.messages[4].parts.insert(c.messages[4].parts.begin(), thinking_part(std::string(300, 's'), "SIG"));
  Part opaque;
  opaque.kind = PartKind::Opaque;
  opaque.opaque_bytes = 100;
  opaque.editable = false;
  c.messages[5].parts.push_back(opaque);  // a snipped message carries it
  c.messages.push_back(assistant_msg("done"));
  for (Message& m : c.messages)
    for (std::size_t j = 0; j < m.parts.size(); ++j) m.parts[j].origin = static_cast<std::uint32_t>(j);
  return c;
}

struct Run {
  Conversation conv;
  PipelineResult result;
};
Run without_memo(Conversation c, const Profile& p) {
  PipelineResult r = prune(c, p, QuarterCounter{});
  return {std::move(c), std::move(r)};
}
Run with_memo(Conversation c, const Profile& p, PipelineCaches& cache) {
  PipelineResult r = prune(c, p, CachedQuarterCounter{}, &cache);
  return {std::move(c), std::move(r)};
}
// A profile field's value, changed.
template <class T>
void change(T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    v = !v;
  } else if constexpr (std::is_arithmetic_v<T>) {
    v = v + 1;
  } else if constexpr (std::is_same_v<T, std::string>) {
    v += "x";
  } else {
    v.push_back("x");
  }
}

std::vector<std::string> first(const Conversation& c, std::size_t n) {
  auto d = dump(c);
  d.resize(std::min(n, d.size()));
  return d;
}

}  // namespace

TEST_CASE("plan memo: a request differing from a planned one in any field the strategies read is planned anew") {
  const Conversation b = base();
  const Profile p0 = stepping_profile();
  struct Mutation {
    const char* what;
    std::function<void(Conversation&, Profile&)> apply;
    bool profile_only = false;  // else the profile it sets holds for the base too
  };
  const std::vector<Mutation> mutations = {
      {"the call id the dedup marker names",
       [](Conversation& c, Profile&) { c.messages[2].parts[2].id = c.messages[3].parts[0].id = "call_zz"; }},
      {"a tool name under exclude_tools",
       [](Conversation& c, Profile& p) {
         p.exclude_tools = {"grep"};
         c.messages[4].parts[2].name = "grep";
       }},
      {"a thinking signature", [](Conversation& c, Profile&) { c.messages[2].parts[0].signature = "SIG0"; }},
      {"an uneditable output", [](Conversation& c, Profile&) { c.messages[5].parts[0].editable = false; }},
      {"a removed message", [](Conversation& c, Profile&) { c.messages[5].removed = true; }},
      {"a part's origin", [](Conversation& c, Profile&) { c.messages[5].parts[0].origin = 7; }},
      {"a message's name", [](Conversation& c, Profile&) { c.messages[5].name = "alice"; }},
      {"a cache breakpoint", [](Conversation& c, Profile&) { c.messages[5].cache_protected = true; }},
      {"an opaque part's size", [](Conversation& c, Profile&) { c.messages[5].parts[1].opaque_bytes = 99; }},
      {"a profile constant", [](Conversation&, Profile& p) { p.stale_tool_outputs_head_bytes = 4; }, true},
      {"an excluded tool", [](Conversation&, Profile& p) { p.exclude_tools = {"bash"}; }, true},
      {"old thinking's end, past the plan",
       [](Conversation& c, Profile& p) {
         // The last messages kept count from the end: one more message at
         // the end (the same turn) lets old thinking reach one further.
         p.old_thinking_keep_last_messages = static_cast<std::uint32_t>(c.messages.size()) - 4;
         c.messages.push_back(assistant_msg("and more"));
       }},
  };
  for (const Mutation& m : mutations) {
    INFO(std::string(m.what));
    Conversation mc = b;
    Profile mp = p0;
    m.apply(mc, mp);
    // The base is planned and memoized first, so that an input missing
    // from the key would be answered from its plan.
    const Profile& base_profile = m.profile_only ? p0 : mp;
    PipelineCaches cache;
    const Run ref_base = without_memo(b, base_profile);
    with_memo(b, base_profile, cache);
    const Run ref = without_memo(mc, mp);
    const Run got = with_memo(mc, mp, cache);
    CHECK(dump(got.conv) == dump(ref.conv));
    CHECK(dump(got.result) == dump(ref.result));
    // A mutation the pruned history does not show would prove nothing.
    CHECK(first(ref.conv, b.messages.size()) != first(ref_base.conv, b.messages.size()));
  }
}

TEST_CASE("plan memo: a resent history, and the next turns until the frontier's grid moves, are planned once") {
  const Profile p = stepping_profile();
  Conversation c = base();
  PipelineCaches cache;
  const Run first_run = with_memo(c, p, cache);
  const std::uint64_t hits = cache.plans.hits();
  const Run again = with_memo(c, p, cache);
  CHECK(cache.plans.hits() == hits + 1);
  CHECK(dump(again.conv) == dump(first_run.conv));
  CHECK(dump(again.result) == dump(first_run.result));
  CHECK(first_run.result.changed());
  // Where the message came from in the body is not the plan's business.
  Conversation moved = c;
  for (Message& m : moved.messages) m.origin += 3;
  const Run shifted = with_memo(moved, p, cache);
  CHECK(cache.plans.hits() == hits + 2);
  for (std::size_t i = 0; i < moved.messages.size(); ++i)
    CHECK(shifted.conv.messages[i].origin == moved.messages[i].origin);
  CHECK(dump(shifted.conv) == dump(without_memo(moved, p).conv));
}

TEST_CASE("plan memo: the key's options change with every profile field a lossy step reads, and only those") {
  // Each profile field changed in turn (through Profile::visit): the cut
  // options differ exactly when a step reads the field, and their
  // fingerprint must then differ too (a field cut but not visited would
  // let a plan made under the old value answer).
  const Profile p0;
  const LossyOptions o0(p0);
  const std::uint64_t f0 = options_fingerprint(o0);
  std::vector<std::string> read;
  for (std::size_t k = 0;; ++k) {
    Profile p = p0;
    std::size_t i = 0;
    std::string name;
    p.visit([&](const char* key, auto& value) {
      if (i++ == k) {
        change(value);
        name = key;
      }
    });
    if (name.empty()) break;
    INFO(name);
    const LossyOptions o(p);
    const bool reads = !(o == o0);
    CHECK(reads == (options_fingerprint(o) != f0));
    if (reads) read.push_back(name);
  }
  // Steps 2-7's own fields and the one they share; nothing of the policy's.
  CHECK(std::find(read.begin(), read.end(), "stale_tool_outputs_saved_markers") != read.end());
  CHECK(std::find(read.begin(), read.end(), "exclude_tools") != read.end());
  CHECK(std::find(read.begin(), read.end(), "recall_max_calls") == read.end());
  CHECK(std::find(read.begin(), read.end(), "trim_middle") == read.end());
}

namespace {

// A counter whose counts are not cached (no salt), like the calibrated
// estimator: its ratio (here `scale` quarters a byte) may move between requests.
class ScaledCounter : public TokenCounter {
 public:
  explicit ScaledCounter(std::uint64_t scale) : scale_(scale) {}
  std::uint64_t count(std::string_view text) const override { return (text.size() * scale_ + 3) / 4; }

 private:
  std::uint64_t scale_;
};

}  // namespace

TEST_CASE("plan memo: under a counter without a salt the plan is memoized and counted by the request's counter") {
  const Profile p = stepping_profile();
  const Conversation c = base();
  PipelineCaches cache;
  Conversation first_request = c;
  prune(first_request, p, ScaledCounter(1), &cache);
  const std::uint64_t hits = cache.plans.hits();
  // The same history, the estimator's ratio moved: the stored plan, counted anew.
  Conversation got = c, ref = c;
  const PipelineResult with = prune(got, p, ScaledCounter(3), &cache);
  const PipelineResult without = prune(ref, p, ScaledCounter(3));
  CHECK(cache.plans.hits() == hits + 1);
  CHECK(with.changed());
  CHECK(dump(got) == dump(ref));
  CHECK(dump(with) == dump(without));
  CHECK(with.tokens_after == without.tokens_after);
}
