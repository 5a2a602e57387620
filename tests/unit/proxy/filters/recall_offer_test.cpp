// The recall offer's timing (proxy/filters/recall_offer_filter.hpp,
// docs/design.md §Recall): an agent turn the diet may cut gets the
// tokendiet_recall tool from the session's first request on, before any cut,
// so the tools that head the provider's cached prefix never change at a cut;
// a request the diet leaves to the client (no tools, a client's own
// compaction, recall off, shadow, the profile off) goes as it came.
#include <doctest/doctest.h>

#include <string>

#include "diet_chain.hpp"
#include "proxy/reports/recall_offer.hpp"

using namespace td::proxy;
using td::test::DietChain;

namespace {

constexpr const char* kTool = R"("name":"tokendiet_recall")";

// An OpenAI chat body of a short session (nothing to cut), `last` the newest user message.
std::string chat_body(bool tools, const std::string& last = "Carry on.") {
  std::string body = R"({"model":"gpt-4o","messages":[{"role":"system","content":"You are an agent."},)"
                     R"({"role":"user","content":"Fix the parser."},)"
                     R"({"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function",)"
                     R"("function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}}]},)"
                     R"({"role":"tool","tool_call_id":"call_1","content":"parser.c\nMakefile\n"},)"
                     R"({"role":"user","content":")" +
                     last + R"("}])";
  if (tools) body += R"(,"tools":[{"type":"function","function":{"name":"bash","parameters":{"type":"object"}}}])";
  return body + "}";
}

td::config::Config config_with(const td::pruning::Profile& p) {
  td::config::Config cfg;
  cfg.profiles.push_back(p);
  return cfg;
}

struct Sent {
  std::string body;
  bool offered = false;  // a RecallOffer was published (the recall loop answers from it)
};

Sent send(const td::config::Config& cfg, const std::string& body) {
  td::diet::DietCaches caches;
  DietChain chain(cfg, DietServices{.caches = &caches});
  RequestContext ctx;
  ctx.method = "POST";
  ctx.target = "/v1/chat/completions";
  ctx.key_fingerprint = "0123456789abcdef";
  Sent s{body};
  CHECK_FALSE(chain.body_phase(ctx, s.body).answer.has_value());
  s.offered = ctx.objects.find<RecallOffer>() != nullptr;
  return s;
}

}  // namespace

TEST_CASE("recall offer: an agent turn gets the tool from the session's first request, before any cut") {
  const td::config::Config cfg = config_with(td::pruning::Profile{});
  const std::string sent = chat_body(true);
  const Sent first = send(cfg, sent);
  CHECK(first.body.find(kTool) != std::string::npos);
  CHECK(first.offered);
  // Nothing was cut: the tool is the only change, appended to the client's tools.
  CHECK(first.body.find(R"("name":"bash")") < first.body.find(kTool));
  // The next request of the session carries the same tools, byte for byte.
  const Sent next = send(cfg, chat_body(true, "And the tests."));
  const auto tools_of = [](const std::string& b) { return b.substr(b.find(R"("tools":)")); };
  CHECK(tools_of(next.body) == tools_of(first.body));
}

TEST_CASE("recall offer: no tool where the diet leaves the request to the client") {
  td::pruning::Profile p;
  std::string sent = chat_body(true);
  SUBCASE("a request without tools (a title, a summary)") { sent = chat_body(false); }
  SUBCASE("a client's own compaction request: byte for byte") {
    sent = chat_body(true, "You are performing a CONTEXT CHECKPOINT COMPACTION. Summarize.");
  }
  SUBCASE("recall: false") { p.recall = false; }
  SUBCASE("a shadow profile") { p.shadow = true; }
  SUBCASE("a profile that is off") { p.enabled = false; }
  const Sent s = send(config_with(p), sent);
  CHECK(s.body == sent);
  CHECK_FALSE(s.offered);
}
