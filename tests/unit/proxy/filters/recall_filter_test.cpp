// The recall filter through its phases as the network code runs them
// (docs/design.md §Continuations), chained with the usage filter after it:
// response head → body pieces → continuation phase → the next round's pieces.
#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "proxy/filters/recall_filter.hpp"
#include "proxy/filters/usage_filter.hpp"
#include "filter_reports.hpp"
#include "recall_rounds.hpp"
#include "test_util.hpp"

using namespace td;
using namespace td::proxy;

namespace {

// An archive of the tests' own: entries per key fingerprint.
struct MapSource final : RecallSource {
  std::map<std::pair<std::string, std::string>, std::string> entries;
  RecallLimits limits;
  std::optional<std::string> read(std::string_view key_fp, std::string_view id) const override {
    auto it = entries.find({std::string(key_fp), std::string(id)});
    if (it == entries.end()) return std::nullopt;
    return it->second;
  }
};

std::string ev(const std::string& name, const std::string& data) {
  return "event: " + name + "\ndata: " + data + "\n\n";
}

// An Anthropic round: text, then (if `recall_id`) a tokendiet_recall call of it.
std::string round(int n, const std::string& text, const std::string& recall_id) {
  const std::string in = std::to_string(100 * n);
  std::string s =
      ev("message_start",
         R"({"type":"message_start","message":{"id":"msg_)" + std::to_string(n) +
             R"(","type":"message","role":"assistant","content":[],"model":"claude-x","usage":{"input_tokens":)" + in +
             R"(,"output_tokens":1}}})");
  s += ev("content_block_start",
          R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})");
  s += ev("content_block_delta",
          R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":")" + text + "\"}}");
  s += ev("content_block_stop", R"({"type":"content_block_stop","index":0})");
  if (!recall_id.empty()) {
    s += ev("content_block_start",
            R"({"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_)" +
                std::to_string(n) + R"(","name":"tokendiet_recall","input":{}}})");
    s += ev("content_block_delta",
            R"({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"id\":\")" +
                recall_id + R"(\"}"}})");
    s += ev("content_block_stop", R"({"type":"content_block_stop","index":1})");
  }
  s += ev("message_delta", std::string(R"({"type":"message_delta","delta":{"stop_reason":")") +
                               (recall_id.empty() ? "end_turn" : "tool_use") + R"("},"usage":{"output_tokens":10}})");
  s += ev("message_stop", R"({"type":"message_stop"})");
  return s;
}

// The chain [recall, usage] over the rounds `upstream` serves, as the relay runs it.
struct Chain {
  std::vector<std::unique_ptr<Filter>> filters;
  RequestContext ctx;
  std::string body = R"({"model":"claude-x","stream":true,"messages":[{"role":"user","content":"go"}]})";
  std::string client;
  std::vector<std::string> sent;  // each round's request body
  int ends_seen_by_usage = 0;

  bool sse = true;

  explicit Chain(providers::Api api = providers::Api::anthropic, bool sse_ = true) : sse(sse_) {
    config::Config cfg;
    filters.push_back(std::make_unique<RecallFilter>());
    filters.push_back(std::make_unique<UsageFilter>(cfg));
    ctx.method = "POST";
    ctx.target = recall_rounds::target(api, sse);
    if (api != providers::Api::anthropic) body = recall_rounds::request(api);
    ctx.model = "claude-x";
    ctx.key_fingerprint = "key1";
    SimpleHeaderMap req;
    for (auto& f : filters) f->request_body_filter(ctx, req, body);
    sent.push_back(body);
  }

  // One piece through phase 5 (the end hidden from later filters once one continues).
  void piece(std::string chunk, bool end) {
    for (auto& f : filters) {
      f->response_body_filter(ctx, chunk, end);
      if (end && ctx.continuation) end = false;
    }
    client += chunk;
  }

  // Serves `rounds` in turn while the filters continue; returns the rounds used.
  std::size_t run(const std::vector<std::string>& rounds) {
    ctx.status = 200;
    SimpleHeaderMap head{{"content-type", sse ? "text/event-stream" : "application/json"}};
    for (auto& f : filters) f->response_head_filter(ctx, head);
    std::size_t i = 0;
    for (;;) {
      const std::string& r = rounds[i++];
      for (std::size_t p = 0; p < r.size(); p += 37) piece(r.substr(p, 37), false);
      piece("", true);
      if (!ctx.continuation) return i;
      ctx.continuation = false;
      bool asked = false;
      for (auto& f : filters)
        if (!asked && f->continuation_filter(ctx, body)) asked = true;
      if (!asked || i == rounds.size()) {
        piece("", true);
        return i;
      }
      sent.push_back(body);
    }
  }
};

}  // namespace

TEST_CASE("recall filter: the call answered from the archive, the rounds one response, usage the sum") {
  MapSource archive;
  archive.entries[{"key1", "td-aaa"}] = "line 1\nline 2\nline 3\n";
  Chain c;
  td::test::offer_recall(c.ctx, archive, archive.limits);
  CHECK(c.run({round(1, "Let me look.", "td-aaa"), round(2, "It says line 2.", "")}) == 2);
  REQUIRE(c.sent.size() == 2);
  CHECK(c.sent[1].find(R"("content":"line 1\nline 2\nline 3\n")") != std::string::npos);
  CHECK(c.client.find("Let me look.") != std::string::npos);
  CHECK(c.client.find("It says line 2.") != std::string::npos);
  CHECK(c.client.find("tokendiet_recall") == std::string::npos);
  CHECK(usage_test::occurrences(c.client, "event: message_start") == 1);
  CHECK(td::test::recall_report(c.ctx).recalled == std::vector<std::string>{"td-aaa"});
  CHECK(td::test::recall_report(c.ctx).rounds == 1);
  // The usage filter read the merged response: both rounds.
  CHECK(td::test::billed(c.ctx).usage.prompt == 300);
  CHECK(td::test::billed(c.ctx).usage.completion == 20);
}

TEST_CASE("recall filter: an unknown id, another key's entry: a tool result saying so") {
  MapSource archive;
  archive.entries[{"key2", "td-bbb"}] = "not yours";
  Chain c;
  td::test::offer_recall(c.ctx, archive, archive.limits);
  c.run({round(1, "a", "td-bbb"), round(2, "b", "")});
  REQUIRE(c.sent.size() == 2);
  CHECK(c.sent[1].find("not yours") == std::string::npos);
  CHECK(c.sent[1].find("unknown id") != std::string::npos);
}

TEST_CASE("recall filter: at most 3 rounds; the fourth round's call never reaches the client") {
  MapSource archive;
  archive.entries[{"key1", "td-aaa"}] = "x";
  Chain c;
  td::test::offer_recall(c.ctx, archive, archive.limits);
  const std::string again = round(1, "again", "td-aaa");
  CHECK(c.run({again, again, again, again, round(5, "never", "")}) == 4);
  CHECK(td::test::recall_report(c.ctx).rounds == RecallFilter::kMaxRounds);
  CHECK(c.sent.size() == 4);
  CHECK(c.client.find("tokendiet_recall") == std::string::npos);
  CHECK(c.client.find(R"("stop_reason":"end_turn")") != std::string::npos);
  CHECK(c.client.find(R"("stop_reason":"tool_use")") == std::string::npos);
  CHECK(usage_test::occurrences(c.client, "event: message_stop") == 1);
}

// Every format, streamed or not, with and without a call of the client's own tool.
template <class Fn>
void for_each_shape(Fn&& fn) {
  for (providers::Api api : recall_rounds::kApis) {
    for (bool sse : {true, false}) {
      for (bool client_call : {false, true}) {
        CAPTURE(static_cast<int>(api));
        CAPTURE(sse);
        CAPTURE(client_call);
        fn(api, sse, client_call);
      }
    }
  }
}

TEST_CASE("recall filter: a model that never stops calling recall: no format's answer carries the tool") {
  for_each_shape([](providers::Api api, bool sse, bool client_call) {
    MapSource archive;
    archive.entries[{"key1", "td-aaa"}] = "x";
    Chain c(api, sse);
    td::test::offer_recall(c.ctx, archive, archive.limits);
    recall_rounds::Round r;
    r.recalls = {R"({"id":"td-aaa"})"};
    r.client_call = client_call;
    const std::string again = recall_rounds::round(api, r, sse);
    CHECK(c.run({again, again, again, again, again}) == 4);
    CHECK(td::test::recall_report(c.ctx).rounds == RecallFilter::kMaxRounds);
    CHECK(c.client.find("tokendiet_recall") == std::string::npos);
    // The last round's own call of the client's tool is the one left.
    CHECK((c.client.find("\"bash\"") != std::string::npos) == client_call);
  });
}

TEST_CASE("recall filter: an answer that calls no recall reaches the client byte for byte, in every format") {
  for_each_shape([](providers::Api api, bool sse, bool client_call) {
    MapSource archive;
    Chain c(api, sse);
    td::test::offer_recall(c.ctx, archive, archive.limits);
    recall_rounds::Round r;
    r.client_call = client_call;
    const std::string upstream = recall_rounds::round(api, r, sse);
    CHECK(c.run({upstream}) == 1);
    CHECK(c.client == upstream);
    CHECK(td::test::recall_report(c.ctx).rounds == 0);
  });
}

TEST_CASE("recall filter: a round of 1,000 calls of one entry: answered once, within the answer and body bounds") {
  MapSource archive;
  std::string big;
  for (int i = 0; big.size() < 100000; ++i) big += "line " + std::to_string(i) + " of a long archived output\n";
  archive.entries[{"key1", "td-big"}] = big;
  archive.limits.max_body_bytes = 1 << 20;
  Chain c(providers::Api::anthropic, true);
  td::test::offer_recall(c.ctx, archive, archive.limits);
  recall_rounds::Round r;
  r.recalls.assign(1000, R"({"id":"td-big"})");
  CHECK(c.run({recall_rounds::round(providers::Api::anthropic, r, true), round(2, "done", "")}) == 2);
  REQUIRE(c.sent.size() == 2);
  const std::string& body = c.sent[1];
  CHECK(body.size() < archive.limits.max_body_bytes);
  CHECK(usage_test::occurrences(body, "\"type\":\"tool_result\"") == 1000);
  CHECK(usage_test::occurrences(body, "line 7 of a long archived output") == 1);
  CHECK(usage_test::occurrences(body, "the same call as an earlier one in this turn") == 999);
  CHECK(body.find("an answer holds at most 16384 bytes") != std::string::npos);
  CHECK(td::test::recall_report(c.ctx).recalled == std::vector<std::string>{"td-big"});
  CHECK(c.client.find("tokendiet_recall") == std::string::npos);
}

TEST_CASE("recall filter: at most recall_max_calls distinct calls answered a round, the others told to ask again") {
  MapSource archive;
  recall_rounds::Round r;
  for (int i = 0; i < 6; ++i) {
    const std::string id = "td-e" + std::to_string(i);
    archive.entries[{"key1", id}] = "entry " + std::to_string(i) + "\n";
    r.recalls.push_back(R"({"id":")" + id + R"("})");
  }
  archive.limits.max_calls = 4;
  Chain c;
  td::test::offer_recall(c.ctx, archive, archive.limits);
  c.run({recall_rounds::round(providers::Api::anthropic, r, true), round(2, "done", "")});
  REQUIRE(c.sent.size() == 2);
  for (int i = 0; i < 4; ++i) CHECK(c.sent[1].find("entry " + std::to_string(i) + "\\n") != std::string::npos);
  CHECK(c.sent[1].find("entry 4") == std::string::npos);
  CHECK(usage_test::occurrences(c.sent[1], "not answered: at most 4 calls are answered per turn") == 2);
  CHECK(td::test::recall_report(c.ctx).recalled.size() == 4);
}

TEST_CASE("recall filter: the continuation stays under limits.max_body_bytes") {
  MapSource archive;
  archive.entries[{"key1", "td-aaa"}] = std::string(60000, 'a') + "\n";
  archive.entries[{"key1", "td-bbb"}] = std::string(3000, 'b') + "\n" + std::string(3000, 'b') + "\n";
  Chain c;
  archive.limits.max_body_bytes = c.body.size() + 6500;
  archive.limits.max_answer_bytes = 1 << 20;
  td::test::offer_recall(c.ctx, archive, archive.limits);
  recall_rounds::Round r;
  r.recalls = {R"({"id":"td-bbb"})", R"({"id":"td-aaa"})"};
  c.run({recall_rounds::round(providers::Api::anthropic, r, true), round(2, "done", "")});
  REQUIRE(c.sent.size() == 2);
  CHECK(c.sent[1].size() <= archive.limits.max_body_bytes);
  CHECK(c.sent[1].find(std::string(3000, 'b')) != std::string::npos);  // the first fits, in part
  CHECK(c.sent[1].find("ask for lines 2-2 next") != std::string::npos);
  CHECK(c.sent[1].find("the request would exceed the proxy's body limit") != std::string::npos);
}

TEST_CASE("recall filter: without a recall offer the response passes untouched and nothing continues") {
  Chain c;
  const std::string r = round(1, "Let me look.", "td-aaa");
  CHECK(c.run({r}) == 1);
  CHECK(c.client == r);
  CHECK(c.sent.size() == 1);
  CHECK(td::test::recall_report(c.ctx).rounds == 0);
}
