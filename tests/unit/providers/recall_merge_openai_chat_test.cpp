#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <string>
#include <vector>

#include "providers/recall_merge.hpp"

using namespace td::providers;

namespace {

std::string chunk(const std::string& id, const std::string& choice_or_usage) {
  return "data: {\"id\":\"" + id + "\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-x\"," + choice_or_usage +
         "}\n\n";
}
std::string delta(const std::string& id, const std::string& d, const std::string& finish = "null") {
  return chunk(id, R"("choices":[{"index":0,"delta":)" + d + R"(,"finish_reason":)" + finish + "}]");
}

const std::string kRound1 =
    delta("c1", R"({"role":"assistant","content":""})") + delta("c1", R"({"content":"Let me look."})") +
    delta(
        "c1",
        R"({"tool_calls":[{"index":0,"id":"call_r","type":"function","function":{"name":"tokendiet_recall","arguments":""}}]})") +
    delta("c1", R"({"tool_calls":[{"index":0,"function":{"arguments":"{\"id\":\"td-abc\"}"}}]})") +
    delta(
        "c1",
        R"({"tool_calls":[{"index":1,"id":"call_c","type":"function","function":{"name":"bash","arguments":"{}"}}]})") +
    delta("c1", "{}", "\"tool_calls\"") +
    chunk(
        "c1",
        R"("choices":[],"usage":{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120,"prompt_tokens_details":{"cached_tokens":40}})") +
    "data: [DONE]\n\n";
const std::string kRound2 =
    delta("c2", R"({"role":"assistant","content":""})") + delta("c2", R"({"content":" It was 42."})") +
    delta("c2", "{}", "\"stop\"") +
    chunk(
        "c2",
        R"("choices":[],"usage":{"prompt_tokens":300,"completion_tokens":30,"total_tokens":330,"prompt_tokens_details":{"cached_tokens":100}})") +
    "data: [DONE]\n\n";

void feed(RecallMerge& m, const std::string& s, std::string& out, std::size_t step) {
  for (std::size_t i = 0; i < s.size(); i += step) m.feed(std::string_view(s).substr(i, step), out);
}

std::vector<std::string> datas(const std::string& stream) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while ((pos = stream.find("data: ", pos)) != std::string::npos) {
    const auto end = stream.find("\n\n", pos);
    out.push_back(stream.substr(pos + 6, end - pos - 6));
    pos = end;
  }
  return out;
}

}  // namespace

TEST_CASE("recall merge, OpenAI chat stream: one chunk id, one usage chunk summed, one [DONE], no recall call") {
  for (std::size_t step : {5u, 77u, 100000u}) {
    auto m = RecallMerge::make(Api::openai_chat, true);
    REQUIRE(m);
    std::string out;
    feed(*m, kRound1, out, step);
    const auto calls = m->end_round(out);
    REQUIRE(calls.size() == 1);
    CHECK(calls[0].call_id == "call_r");
    CHECK(calls[0].arguments == R"({"id":"td-abc"})");
    CHECK(out.find("Let me look.") != std::string::npos);
    CHECK(out.find("[DONE]") == std::string::npos);

    std::string body = R"({"model":"gpt-x","messages":[{"role":"user","content":"go"}],"stream":true})";
    REQUIRE(m->continue_with(body, {"archived text"}));
    rapidjson::Document req;
    req.Parse(body.c_str());
    REQUIRE_FALSE(req.HasParseError());
    const auto& msgs = req["messages"];
    REQUIRE(msgs.Size() == 3);
    CHECK(std::string(msgs[1]["content"].GetString()) == "Let me look.");
    REQUIRE(msgs[1]["tool_calls"].Size() == 1);  // not the client's bash call
    CHECK(std::string(msgs[1]["tool_calls"][0]["function"]["name"].GetString()) == "tokendiet_recall");
    CHECK(std::string(msgs[2]["role"].GetString()) == "tool");
    CHECK(std::string(msgs[2]["tool_call_id"].GetString()) == "call_r");
    CHECK(std::string(msgs[2]["content"].GetString()) == "archived text");

    feed(*m, kRound2, out, step);
    CHECK(m->end_round(out).empty());
    const auto ds = datas(out);
    int done = 0, usage_chunks = 0, finishes = 0;
    for (const auto& d : ds) {
      if (d == "[DONE]") {
        ++done;
        continue;
      }
      rapidjson::Document c;
      c.Parse(d.c_str());
      REQUIRE_FALSE(c.HasParseError());
      CHECK(std::string(c["id"].GetString()) == "c1");
      if (c.HasMember("usage") && c["usage"].IsObject()) {
        ++usage_chunks;
        CHECK(c["usage"]["prompt_tokens"].GetInt() == 400);
        CHECK(c["usage"]["completion_tokens"].GetInt() == 50);
        CHECK(c["usage"]["prompt_tokens_details"]["cached_tokens"].GetInt() == 140);
      }
      if (!c["choices"].Empty() && !c["choices"][0]["finish_reason"].IsNull()) {
        ++finishes;
        CHECK(std::string(c["choices"][0]["finish_reason"].GetString()) == "stop");
      }
    }
    CHECK(done == 1);
    CHECK(ds.back() == "[DONE]");
    CHECK(usage_chunks == 1);
    CHECK(finishes == 1);
    CHECK(out.find("tokendiet_recall") == std::string::npos);
    CHECK(out.find("call_c") == std::string::npos);
    CHECK(out.find(" It was 42.") != std::string::npos);
  }
}

TEST_CASE("recall merge, OpenAI chat stream: a round without a recall call passes byte for byte, tool calls included") {
  const std::string plain =
      delta("c9", R"({"role":"assistant","content":null})") +
      delta(
          "c9",
          R"({"tool_calls":[{"index":0,"id":"call_c","type":"function","function":{"name":"bash","arguments":"{}"}}]})") +
      delta("c9", "{}", "\"tool_calls\"") + "data: [DONE]\n\n";
  auto m = RecallMerge::make(Api::openai_chat, true);
  std::string out;
  feed(*m, plain, out, 9);
  CHECK(m->end_round(out).empty());
  CHECK(out == plain);
}

TEST_CASE("recall merge, OpenAI chat JSON: the rounds' text joined, usage summed, the first id, no recall call") {
  const std::string r1 =
      R"({"id":"c1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Checking.","tool_calls":[{"id":"call_r","type":"function","function":{"name":"tokendiet_recall","arguments":"{\"id\":\"td-abc\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120}})";
  const std::string r2 =
      R"({"id":"c2","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":" 42."},"finish_reason":"stop"}],"usage":{"prompt_tokens":300,"completion_tokens":30,"total_tokens":330}})";
  auto m = RecallMerge::make(Api::openai_chat, false);
  std::string out;
  feed(*m, r1, out, 33);
  REQUIRE(m->end_round(out).size() == 1);
  std::string body = R"({"messages":[]})";
  REQUIRE(m->continue_with(body, {"x"}));
  feed(*m, r2, out, 33);
  CHECK(m->end_round(out).empty());
  rapidjson::Document d;
  d.Parse(out.c_str());
  REQUIRE_FALSE(d.HasParseError());
  CHECK(std::string(d["id"].GetString()) == "c1");
  CHECK(std::string(d["choices"][0]["message"]["content"].GetString()) == "Checking. 42.");
  CHECK_FALSE(d["choices"][0]["message"].HasMember("tool_calls"));
  CHECK(std::string(d["choices"][0]["finish_reason"].GetString()) == "stop");
  CHECK(d["usage"]["prompt_tokens"].GetInt() == 400);
  CHECK(d["usage"]["total_tokens"].GetInt() == 450);
}
