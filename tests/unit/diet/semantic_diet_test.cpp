// Semantic mode through the diet's steps (diet/diet.hpp), on a real
// Codex session with update_plan (tests/fixtures/replay/codex-1.json): the
// request is reported `semantic`, every archived entry is exactly the text
// its tombstone replaced in the body as sent (decoded), the written body
// carries the tombstones, and the switch the archive's fail-open re-run uses
// turns it off.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "config/config.hpp"
#include "diet/diet.hpp"
#include "pruning/strategies/completed_tasks.hpp"
#include "trajectory_body.hpp"

using namespace td::diet;
using td::test::trajectory_body;

namespace {

td::config::Config semantic_config(bool on) {
  td::config::Config cfg;
  td::pruning::Profile p;
  p.trigger_tokens = 1u << 30;  // the stale frontier stays put: only semantic mode acts
  p.semantic_threshold = 8000;
  p.completed_tasks_min_output_bytes = 256;
  p.completed_tasks = on;
  cfg.profiles.push_back(p);
  return cfg;
}

// tool_call_id -> content of each tool message of an OpenAI chat body.
std::map<std::string, std::string> tool_outputs(const std::string& body) {
  rapidjson::Document d;
  d.Parse(body.data(), body.size());
  REQUIRE_FALSE(d.HasParseError());
  std::map<std::string, std::string> out;
  for (const auto& m : d["messages"].GetArray())
    if (std::string(m["role"].GetString()) == "tool")
      out[m["tool_call_id"].GetString()] = std::string(m["content"].GetString(), m["content"].GetStringLength());
  return out;
}

}  // namespace

TEST_CASE("semantic diet: a real Codex session's completed plan steps go behind tombstones, archived byte for byte") {
  const std::string original = trajectory_body("codex-1.json", "gpt-4o");
  DietCaches caches;
  std::string body = original;
  const DietOutcome d = diet_body({}, body, semantic_config(true), caches);
  INFO(d.error);
  REQUIRE_FALSE(d.fail_open);
  REQUIRE_FALSE(d.result.archived.empty());
  CHECK(d.decision.mode == td::pruning::Mode::Semantic);
  CHECK(d.rewritten);
  CHECK(d.result.tokens_after < d.result.tokens_before);
  const auto before = tool_outputs(original), after = tool_outputs(body);
  std::size_t matched = 0;
  for (const auto& a : d.result.archived) {
    CHECK(a.id == td::pruning::archive_id(a.text));
    // The output it replaced: the tool message whose content is now the tombstone naming it.
    for (const auto& [id, text] : after) {
      if (text.find(a.id) == std::string::npos) continue;
      ++matched;
      CHECK(before.at(id) == a.text);
      CHECK(text == td::pruning::tombstone_text(a.task, a.id, a.tokens));
    }
  }
  CHECK(matched == d.result.archived.size());

  // The same history dieted again: the same bytes.
  std::string again = original;
  DietCaches fresh;
  diet_body({}, again, semantic_config(true), fresh);
  CHECK(again == body);

  // Switched off (the archive's fail-open re-run): no tombstone, mode standard.
  std::string off = original;
  const DietOutcome o = diet_body({}, off, semantic_config(false), fresh);
  CHECK(o.result.archived.empty());
  CHECK(o.decision.mode == td::pruning::Mode::Standard);
  CHECK(off == original);
}
