// decide(): today's rule, by the profile; run_pipeline(): what the decision
// says, whatever the profile's enabled and shadow say.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "pruning/decision.hpp"
#include "pruning/pipeline.hpp"
#include "pruning_support.hpp"

using namespace td::pruning;
using namespace td::pruning::test;

namespace {

// A loop whose tool outputs are big and repeated: an eager profile prunes it.
Conversation busy_loop(int steps) {
  return agent_loop(steps, [](int k) {
    if (k % 5 == 3) return numbered_lines(20, "src/util.py:");
    std::string out;
    for (int i = 0; i < 300; ++i) out += "step " + std::to_string(k) + " line " + std::to_string(i * 7919) + "\n";
    return out;
  });
}

Profile eager() {
  Profile p;
  p.trigger_tokens = 0;
  return p;
}

}  // namespace

TEST_CASE("decide: enabled, shadow, disabled -> mode and write; every request is sent now") {
  struct Row {
    bool enabled, shadow;
    Mode mode;
    bool write;
  };
  const Row table[] = {
      {true, false, Mode::Standard, true},
      {true, true, Mode::Standard, false},
      {false, false, Mode::None, false},
      {false, true, Mode::None, false},
  };
  const Counted counted{.total = 123, .fixed = 3, .messages = {120}};
  for (const Row& row : table) {
    CAPTURE(row.enabled);
    CAPTURE(row.shadow);
    Profile p;
    p.enabled = row.enabled;
    p.shadow = row.shadow;
    const Decision d = decide(counted, p);
    CHECK(d.mode == row.mode);
    CHECK(d.settings.write == row.write);
    CHECK(d.settings.profile == &p);
    CHECK(d.admission.kind == Admission::Kind::Send);
    CHECK(d.admission.wait.count() == 0);
  }
  CHECK(std::string(mode_name(Mode::None)) == "none");
  CHECK(std::string(mode_name(Mode::Standard)) == "standard");
}

TEST_CASE("run_pipeline: the decision rules, not the profile's enabled and shadow") {
  const Conversation history = busy_loop(40);
  Profile p = eager();
  const Counted counted = count_tokens(history, QuarterCounter{});

  // A profile that says shadow, a decision that writes: the history is pruned.
  p.shadow = true;
  Conversation written = history;
  const PipelineResult w = run_pipeline(written, counted, Decision{Mode::Standard, {&p, true}, {}}, QuarterCounter{});
  REQUIRE(w.changed());
  CHECK(render(written) != render(history));
  CHECK(w.tokens_before == counted.total);
  CHECK(w.tokens_after < w.tokens_before);

  // A profile that says write, a decision that does not: the same savings, nothing changed.
  p.shadow = false;
  Conversation kept = history;
  const PipelineResult k = run_pipeline(kept, counted, Decision{Mode::Standard, {&p, false}, {}}, QuarterCounter{});
  CHECK(dump(k) == dump(w));
  CHECK(render(kept) == render(history));

  // An enabled profile, a decision of None: nothing runs.
  Conversation none = history;
  const PipelineResult n = run_pipeline(none, counted, Decision{Mode::None, {&p, true}, {}}, QuarterCounter{});
  CHECK_FALSE(n.changed());
  CHECK(n.strategies.empty());
  CHECK(n.tokens_before == counted.total);
  CHECK(n.tokens_after == counted.total);
  CHECK(render(none) == render(history));

  // A disabled profile the decision runs anyway (a policy's call): it runs.
  p.enabled = false;
  Conversation forced = history;
  CHECK(dump(run_pipeline(forced, counted, Decision{Mode::Standard, {&p, true}, {}}, QuarterCounter{})) == dump(w));
}

TEST_CASE("count_tokens: the fixed part and every message, as the pipeline counts them") {
  Conversation c = busy_loop(6);
  c.messages[2].removed = true;
  const Counted counted = count_tokens(c, QuarterCounter{});
  REQUIRE(counted.messages.size() == c.messages.size());
  CHECK(counted.messages[2] == 0);
  std::uint64_t sum = counted.fixed;
  for (std::uint64_t n : counted.messages) sum += n;
  CHECK(counted.total == sum);
  Profile off;
  off.enabled = false;
  CHECK(prune(c, off, QuarterCounter{}).tokens_before == counted.total);
  // A count of another conversation is refused, not trusted.
  Conversation longer = busy_loop(8);
  Profile p = eager();
  CHECK_THROWS_AS(run_pipeline(longer, counted, decide(counted, p), QuarterCounter{}), std::invalid_argument);
}
