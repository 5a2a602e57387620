#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <string>
#include <vector>

#include "providers/recall_merge.hpp"

using namespace td::providers;

namespace {

std::string ev(const std::string& name, const std::string& data) {
  return "event: " + name + "\ndata: " + data + "\n\n";
}

// Round 1: text, then a thinking block, then a recall call and a call of the client's own tool.
const std::string kRound1 =
    ev("message_start",
       R"({"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-x","stop_reason":null,"usage":{"input_tokens":100,"cache_read_input_tokens":50,"output_tokens":1}}})") +
    ev("content_block_start",
       R"({"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}})") +
    ev("content_block_delta",
       R"({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"need the log"}})") +
    ev("content_block_delta",
       R"({"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"SIG1"}})") +
    ev("content_block_stop", R"({"type":"content_block_stop","index":0})") +
    ev("content_block_start", R"({"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}})") +
    ev("content_block_delta",
       R"({"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Let me look."}})") +
    ev("content_block_stop", R"({"type":"content_block_stop","index":1})") +
    ev("content_block_start",
       R"({"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_r","name":"tokendiet_recall","input":{}}})") +
    ev("content_block_delta",
       R"({"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"id\":\"td-"}})") +
    ev("content_block_delta",
       R"({"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"abc\"}"}})") +
    ev("content_block_stop", R"({"type":"content_block_stop","index":2})") +
    ev("content_block_start",
       R"({"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"toolu_c","name":"bash","input":{}}})") +
    ev("content_block_delta",
       R"({"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"{\"cmd\":\"ls\"}"}})") +
    ev("content_block_stop", R"({"type":"content_block_stop","index":3})") +
    ev("message_delta",
       R"({"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":20}})") +
    ev("message_stop", R"({"type":"message_stop"})");

const std::string kRound2 =
    ev("message_start",
       R"({"type":"message_start","message":{"id":"msg_2","type":"message","role":"assistant","content":[],"model":"claude-x","stop_reason":null,"usage":{"input_tokens":300,"cache_read_input_tokens":150,"output_tokens":1}}})") +
    ev("ping", R"({"type":"ping"})") +
    ev("content_block_start", R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})") +
    ev("content_block_delta",
       R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"The log says 42."}})") +
    ev("content_block_stop", R"({"type":"content_block_stop","index":0})") +
    ev("message_delta",
       R"({"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":30}})") +
    ev("message_stop", R"({"type":"message_stop"})");

// Feeds `s` in pieces of `step` bytes.
void feed(RecallMerge& m, const std::string& s, std::string& out, std::size_t step) {
  for (std::size_t i = 0; i < s.size(); i += step) m.feed(std::string_view(s).substr(i, step), out);
}

std::vector<rapidjson::Document> events_of(const std::string& stream, std::vector<std::string>& names) {
  std::vector<rapidjson::Document> out;
  std::size_t pos = 0;
  while ((pos = stream.find("event: ", pos)) != std::string::npos) {
    const auto nl = stream.find('\n', pos);
    names.push_back(stream.substr(pos + 7, nl - pos - 7));
    const auto d = stream.find("data: ", nl) + 6;
    const auto end = stream.find('\n', d);
    out.emplace_back();
    out.back().Parse(stream.substr(d, end - d).c_str());
    REQUIRE_FALSE(out.back().HasParseError());
    pos = end;
  }
  return out;
}

}  // namespace

TEST_CASE("recall merge, Anthropic stream: two rounds make one message, the recall call and the client's call gone") {
  for (std::size_t step : {7u, 64u, 100000u}) {
    auto m = RecallMerge::make(Api::anthropic, true);
    REQUIRE(m);
    std::string out;
    feed(*m, kRound1, out, step);
    const auto calls = m->end_round(out);
    REQUIRE(calls.size() == 1);
    CHECK(calls[0].call_id == "toolu_r");
    CHECK(calls[0].arguments == R"({"id":"td-abc"})");
    // Text streamed before the call reached the client already.
    CHECK(out.find("Let me look.") != std::string::npos);
    CHECK(out.find("tokendiet_recall") == std::string::npos);
    CHECK(out.find("message_stop") == std::string::npos);

    std::string body = R"({"model":"claude-x","messages":[{"role":"user","content":"go"}],"stream":true})";
    REQUIRE(m->continue_with(body, {"line one\nline two"}));
    rapidjson::Document req;
    req.Parse(body.c_str());
    REQUIRE_FALSE(req.HasParseError());
    const auto& msgs = req["messages"];
    REQUIRE(msgs.Size() == 3);
    const auto& turn = msgs[1]["content"];
    REQUIRE(turn.Size() == 3);  // thinking (signed), text, the recall call; not the client's bash call
    CHECK(std::string(turn[0]["signature"].GetString()) == "SIG1");
    CHECK(std::string(turn[0]["thinking"].GetString()) == "need the log");
    CHECK(std::string(turn[1]["text"].GetString()) == "Let me look.");
    CHECK(std::string(turn[2]["name"].GetString()) == "tokendiet_recall");
    CHECK(std::string(turn[2]["input"]["id"].GetString()) == "td-abc");
    const auto& result = msgs[2]["content"][0];
    CHECK(std::string(result["type"].GetString()) == "tool_result");
    CHECK(std::string(result["tool_use_id"].GetString()) == "toolu_r");
    CHECK(std::string(result["content"].GetString()) == "line one\nline two");

    feed(*m, kRound2, out, step);
    CHECK(m->end_round(out).empty());
    std::vector<std::string> names;
    auto evs = events_of(out, names);
    int starts = 0, stops = 0, expect_index = 0;
    for (std::size_t i = 0; i < evs.size(); ++i) {
      starts += names[i] == "message_start";
      stops += names[i] == "message_stop";
      if (names[i] == "content_block_start") CHECK(evs[i]["index"].GetInt() == expect_index++);
    }
    CHECK(starts == 1);
    CHECK(stops == 1);
    CHECK(expect_index == 3);
    CHECK(names.back() == "message_stop");
    const auto& delta = evs[evs.size() - 2];
    CHECK(std::string(delta["delta"]["stop_reason"].GetString()) == "end_turn");
    CHECK(delta["usage"]["output_tokens"].GetInt() == 50);
    CHECK(delta["usage"]["input_tokens"].GetInt() == 400);
    CHECK(delta["usage"]["cache_read_input_tokens"].GetInt() == 200);
    CHECK(out.find("The log says 42.") != std::string::npos);
    CHECK(out.find("tokendiet_recall") == std::string::npos);
    CHECK(out.find("toolu_c") == std::string::npos);
  }
}

TEST_CASE("recall merge, Anthropic stream: a round without a recall call passes byte for byte") {
  const std::string plain = kRound2;
  auto m = RecallMerge::make(Api::anthropic, true);
  std::string out;
  feed(*m, plain, out, 13);
  CHECK(m->end_round(out).empty());
  CHECK(out == plain);
}

TEST_CASE("recall merge, Anthropic stream: no next round after all releases the client's call, never the recall call") {
  auto m = RecallMerge::make(Api::anthropic, true);
  std::string out;
  feed(*m, kRound1, out, 50);
  REQUIRE(m->end_round(out).size() == 1);
  m->finish(out);
  CHECK(out.find("tokendiet_recall") == std::string::npos);
  CHECK(out.find("toolu_c") != std::string::npos);
  CHECK(out.find("\"stop_reason\":\"tool_use\"") != std::string::npos);
  CHECK(out.substr(out.size() - 40).find("message_stop") != std::string::npos);
  std::vector<std::string> names;
  auto events = events_of(out, names);
  int last_index = -1;
  for (auto& e : events)
    if (e.HasMember("index")) {
      CHECK(e["index"].GetInt() >= last_index);
      CHECK(e["index"].GetInt() <= last_index + 1);
      last_index = e["index"].GetInt();
    }
  CHECK(last_index == 2);  // thinking, text, the client's tool_use
}

TEST_CASE("recall merge, Anthropic JSON: content of both rounds, usage summed, the first id, no recall call") {
  const std::string r1 =
      R"({"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[{"type":"text","text":"Checking."},{"type":"tool_use","id":"toolu_r","name":"tokendiet_recall","input":{"id":"td-abc","lines":"1-2"}},{"type":"tool_use","id":"toolu_c","name":"bash","input":{}}],"stop_reason":"tool_use","usage":{"input_tokens":100,"output_tokens":20}})";
  const std::string r2 =
      R"({"id":"msg_2","type":"message","role":"assistant","model":"claude-x","content":[{"type":"text","text":"It was 42."}],"stop_reason":"end_turn","usage":{"input_tokens":300,"output_tokens":30}})";
  auto m = RecallMerge::make(Api::anthropic, false);
  std::string out;
  feed(*m, r1, out, 40);
  CHECK(out.empty());
  auto calls = m->end_round(out);
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].arguments == R"({"id":"td-abc","lines":"1-2"})");
  std::string body = R"({"messages":[{"role":"user","content":"go"}]})";
  REQUIRE(m->continue_with(body, {"archived"}));
  CHECK(body.find("toolu_c") == std::string::npos);
  CHECK(body.find(R"("tool_use_id":"toolu_r")") != std::string::npos);
  feed(*m, r2, out, 40);
  CHECK(m->end_round(out).empty());
  rapidjson::Document d;
  d.Parse(out.c_str());
  REQUIRE_FALSE(d.HasParseError());
  CHECK(std::string(d["id"].GetString()) == "msg_1");
  CHECK(std::string(d["stop_reason"].GetString()) == "end_turn");
  REQUIRE(d["content"].Size() == 2);
  CHECK(std::string(d["content"][0]["text"].GetString()) == "Checking.");
  CHECK(std::string(d["content"][1]["text"].GetString()) == "It was 42.");
  CHECK(d["usage"]["input_tokens"].GetInt() == 400);
  CHECK(d["usage"]["output_tokens"].GetInt() == 50);
}
