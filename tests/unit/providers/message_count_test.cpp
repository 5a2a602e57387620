// Message-level counts as OpenAI bills them (rules in message_count.hpp).
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include "providers/billing.hpp"
#include "providers/openai_chat/tools_text.hpp"
#include "providers/request.hpp"
#include "pruning/tokenizer/counter.hpp"
#include "pruning/tokenizer/message_count.hpp"
#include "roundtrip.hpp"

using namespace td::tok;
using namespace td::pruning;

namespace {
Message msg(Role r, std::string text) {
  Message m;
  m.role = r;
  m.parts.push_back(Part{.kind = r == Role::Tool ? PartKind::ToolResult : PartKind::Text, .text = std::move(text)});
  return m;
}
}  // namespace

TEST_CASE("cookbook example: 3 per message + role + content, 1 per name, 3 to prime the reply") {
  // OpenAI cookbook "How to count tokens with tiktoken": these messages are
  // billed 129 prompt tokens on gpt-4o/gpt-4 family models (cl100k shown).
  Conversation c;
  c.messages.push_back(
      msg(Role::System,
          "You are a helpful, pattern-following assistant that translates corporate jargon into plain English."));
  Message ex_user = msg(Role::System, "New synergies will help drive top-line growth.");
  ex_user.name = "example_user";
  c.messages.push_back(ex_user);
  Message ex_asst = msg(Role::System, "Things working well together will increase revenue.");
  ex_asst.name = "example_assistant";
  c.messages.push_back(ex_asst);
  Message ex_user2 =
      msg(Role::System,
          "Let's circle back when we have more bandwidth to touch base on opportunities for increased leverage.");
  ex_user2.name = "example_user";
  c.messages.push_back(ex_user2);
  Message ex_asst2 = msg(Role::System, "Let's talk later when we're less busy about how to do better.");
  ex_asst2.name = "example_assistant";
  c.messages.push_back(ex_asst2);
  c.messages.push_back(
      msg(Role::User, "This late pivot means we don't have time to boil the ocean for the client deliverable."));
  auto n = count_conversation(c, exact_counter(EncodingId::Cl100kBase));
  CHECK(n.total == 129);
  CHECK(n.priming == 3);
  CHECK(n.per_message.size() == 6);
  CHECK(count_conversation(c, exact_counter(EncodingId::O200kBase)).total == 124);
}

TEST_CASE("tool calls, tool results, opaque parts and removed messages") {
  const auto& o200k = exact_counter(EncodingId::O200kBase);
  Message asst;
  asst.role = Role::Assistant;
  asst.parts.push_back(
      Part{.kind = PartKind::ToolCall, .text = R"({"path":"a.txt"})", .id = "c1", .name = "read_file"});
  CHECK(count_message(asst, o200k) ==
        3 + o200k.count("assistant") + o200k.count("read_file") + o200k.count(R"({"path":"a.txt"})") + 3);
  Message tool = msg(Role::Tool, "file contents");
  CHECK(count_message(tool, o200k) == 3 + 1 + o200k.count("file contents"));
  Message img;
  img.parts.push_back(Part{.kind = PartKind::Opaque, .opaque_bytes = 4'000'000});
  CHECK(count_message(img, o200k) == 3 + 1 + BillingRules{}.opaque_cap);
  Conversation c;
  c.messages = {msg(Role::User, "hi"), tool};
  c.messages[1].removed = true;
  auto n = count_conversation(c, o200k);
  CHECK(n.per_message[1] == 0);
  CHECK(n.total == 3 + 1 + 1 + 3);
}

TEST_CASE("tool schemas: rendered as OpenAI does, tokens + 9, - 4 with a system message") {
  rapidjson::Document d;
  d.Parse(R"([{"type":"function","function":{"name":"get_weather","description":"Get the weather",
    "parameters":{"type":"object","properties":{
      "location":{"type":"string","description":"City"},
      "unit":{"type":"string","enum":["c","f"]},
      "days":{"type":"array","items":{"type":"integer"}},
      "opts":{"type":"object","properties":{"x":{"type":"boolean","description":"deep, not shown"}}}},
    "required":["location"]}}},
    {"type":"function","function":{"name":"ping"}},
    {"type":"web_search"}])");
  const std::string text = td::providers::render_openai_tools(d);
  CHECK(text ==
        "namespace functions {\n\n"
        "// Get the weather\n"
        "type get_weather = (_: {\n"
        "// City\n"
        "location: string,\n"
        "unit?: \"c\" | \"f\",\n"
        "days?: number[],\n"
        "opts?: {\n"
        "  x?: boolean,\n"
        "},\n"
        "}) => any;\n\n"
        "type ping = () => any;\n\n"
        "} // namespace functions");
  const auto& o200k = exact_counter(EncodingId::O200kBase);
  Conversation c;
  c.messages = {msg(Role::User, "weather?")};
  c.fixed_overhead_text = text;
  CHECK(count_conversation(c, o200k).tools == o200k.count(text) + 9);
  c.messages.insert(c.messages.begin(), msg(Role::System, "be brief"));
  CHECK(count_conversation(c, o200k).tools == o200k.count(text) + 9 - 4);
}

TEST_CASE("the cache makes a resent history cost only its new messages, with equal totals") {
  const auto& o200k = exact_counter(EncodingId::O200kBase);
  CountCache cache(1 << 12);
  Conversation c;
  c.fixed_overhead_text = "namespace functions {\n\ntype ping = () => any;\n\n} // namespace functions";
  for (int i = 0; i < 20; ++i)
    c.messages.push_back(msg(i % 2 ? Role::Assistant : Role::User, "turn " + std::to_string(i)));
  auto first = count_conversation(c, o200k, &cache);
  CHECK(first.cache_hits == 0);
  c.messages.push_back(msg(Role::User, "one more"));
  auto second = count_conversation(c, o200k, &cache);
  CHECK(second.cache_hits == 20);
  CHECK(second.total == count_conversation(c, o200k).total);
  // An edit is a different message: counted afresh.
  set_text(c.messages[3], c.messages[3].parts[0], "edited");
  auto third = count_conversation(c, o200k, &cache);
  CHECK(third.cache_hits == 20);
  CHECK(third.total == count_conversation(c, o200k).total);
  // Another encoding never reuses these counts.
  CHECK(count_conversation(c, exact_counter(EncodingId::Cl100kBase), &cache).cache_hits == 0);
  // Estimators are not cached (cheaper than a hash, and their ratio moves).
  EstimatingCounter est;
  CHECK(count_conversation(c, est, &cache).cache_hits == 0);
}

TEST_CASE("an OpenAI chat body through the adapter: names, tools rendered, cached by raw text") {
  const std::string body = R"({"model":"gpt-4o","messages":[
    {"role":"system","content":"be brief"},
    {"role":"user","name":"ann","content":"weather in Oslo?"}],
    "tools":[{"type":"function","function":{"name":"get_weather","description":"Get the weather",
      "parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]})";
  auto parsed = td::providers::parse(td::providers::Api::openai_chat, body, &td::providers::test::test_memo());
  REQUIRE(parsed.request);
  const Conversation& c = parsed.request->conversation;
  CHECK(c.messages[1].name == "ann");
  const auto rules = td::providers::billing_rules_for(td::providers::Api::openai_chat);
  const auto& o200k = exact_counter(EncodingId::O200kBase);
  const std::string rendered =
      "namespace functions {\n\n// Get the weather\ntype get_weather = (_: {\ncity: string,\n}) => any;\n\n"
      "} // namespace functions";
  CHECK(td::providers::render_openai_tools_json(c.fixed_overhead_text) == rendered);
  CountCache cache(1024);
  auto n = count_conversation(c, o200k, &cache, rules);
  CHECK(n.tools == o200k.count(rendered) + 9 - 4);
  CHECK(n.per_message[1] == 3 + 1 + o200k.count("weather in Oslo?") + o200k.count("ann") + 1);
  auto again = count_conversation(c, o200k, &cache, rules);
  CHECK(again.total == n.total);
  CHECK(again.cache_hits == 2);
  CHECK(cache.stats().hits == 3);  // the two messages and the tools
}
