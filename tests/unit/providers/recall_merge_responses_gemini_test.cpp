#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <string>
#include <vector>

#include "providers/recall_merge.hpp"

using namespace td::providers;

namespace {

void feed(RecallMerge& m, const std::string& s, std::string& out, std::size_t step) {
  for (std::size_t i = 0; i < s.size(); i += step) m.feed(std::string_view(s).substr(i, step), out);
}

std::vector<rapidjson::Document> datas(const std::string& stream, std::vector<std::string>* names = nullptr) {
  std::vector<rapidjson::Document> out;
  std::size_t pos = 0;
  while ((pos = stream.find("data: ", pos)) != std::string::npos) {
    const auto end = stream.find("\n\n", pos);
    if (names) {
      const auto ev = stream.rfind("event: ", pos);
      names->push_back(ev == std::string::npos ? "" : stream.substr(ev + 7, stream.find('\n', ev) - ev - 7));
    }
    out.emplace_back();
    out.back().Parse(stream.substr(pos + 6, end - pos - 6).c_str());
    REQUIRE_FALSE(out.back().HasParseError());
    pos = end;
  }
  return out;
}

std::string rev(const std::string& type, int seq, const std::string& rest) {
  return "event: " + type + "\ndata: {\"type\":\"" + type + "\",\"sequence_number\":" + std::to_string(seq) + rest +
         "}\n\n";
}

std::string responses_round(const std::string& id, const std::string& text, bool call, int input_tokens) {
  int s = 0;
  const std::string msg = R"({"type":"message","id":"m_)" + id +
                          R"(","role":"assistant","status":"completed","content":[{"type":"output_text","text":")" +
                          text + R"("}]})";
  const std::string rsn =
      R"({"type":"reasoning","id":"rs_)" + id + R"(","summary":[],"encrypted_content":"ENC_)" + id + R"("})";
  const std::string fc =
      R"({"type":"function_call","id":"fc_)" + id +
      R"(","call_id":"call_r","name":"tokendiet_recall","arguments":"{\"id\":\"td-abc\"}","status":"completed"})";
  const std::string bash = R"({"type":"function_call","id":"fb_)" + id +
                           R"(","call_id":"call_c","name":"bash","arguments":"{}","status":"completed"})";
  std::string out =
      rev("response.created", s++, R"(,"response":{"id":")" + id + R"(","status":"in_progress","output":[]})");
  out += rev("response.output_item.added", s++,
             R"(,"output_index":0,"item":{"type":"reasoning","id":"rs_)" + id + R"(","summary":[]})");
  out += rev("response.output_item.done", s++, R"(,"output_index":0,"item":)" + rsn);
  out += rev("response.output_item.added", s++,
             R"(,"output_index":1,"item":{"type":"message","id":"m_)" + id + R"(","content":[]})");
  out += rev("response.output_text.delta", s++,
             R"(,"output_index":1,"item_id":"m_)" + id + R"(","content_index":0,"delta":")" + text + "\"");
  out += rev("response.output_item.done", s++, R"(,"output_index":1,"item":)" + msg);
  std::string output = rsn + "," + msg;
  if (call) {
    out += rev("response.output_item.added", s++, R"(,"output_index":2,"item":)" + fc);
    out += rev("response.function_call_arguments.delta", s++,
               R"(,"output_index":2,"item_id":"fc_)" + id + R"(","delta":"{\"id\":\"td-abc\"}")");
    out += rev("response.output_item.done", s++, R"(,"output_index":2,"item":)" + fc);
    out += rev("response.output_item.added", s++, R"(,"output_index":3,"item":)" + bash);
    out += rev("response.output_item.done", s++, R"(,"output_index":3,"item":)" + bash);
    output += "," + fc + "," + bash;
  }
  out += rev("response.completed", s++,
             R"(,"response":{"id":")" + id + R"(","status":"completed","output":[)" + output +
                 R"(],"usage":{"input_tokens":)" + std::to_string(input_tokens) +
                 R"(,"output_tokens":10,"total_tokens":)" + std::to_string(input_tokens + 10) + "}}");
  return out;
}

}  // namespace

TEST_CASE(
    "recall merge, Responses stream: one created and completed, output indices and sequence numbers consecutive") {
  for (std::size_t step : {11u, 100000u}) {
    auto m = RecallMerge::make(Api::openai_responses, true);
    REQUIRE(m);
    std::string out;
    feed(*m, responses_round("resp_1", "Let me look.", true, 100), out, step);
    const auto calls = m->end_round(out);
    REQUIRE(calls.size() == 1);
    CHECK(calls[0].call_id == "call_r");
    std::string body = R"({"model":"gpt-x","input":"go","stream":true,"include":["reasoning.encrypted_content"]})";
    REQUIRE(m->continue_with(body, {"archived"}));
    rapidjson::Document req;
    req.Parse(body.c_str());
    REQUIRE_FALSE(req.HasParseError());
    const auto& input = req["input"];
    REQUIRE(input.Size() == 5);  // the user's string as a message, reasoning, message, the recall call, its output
    CHECK(std::string(input[0]["content"].GetString()) == "go");
    CHECK(std::string(input[1]["encrypted_content"].GetString()) == "ENC_resp_1");
    CHECK(std::string(input[3]["name"].GetString()) == "tokendiet_recall");
    CHECK(std::string(input[4]["type"].GetString()) == "function_call_output");
    CHECK(std::string(input[4]["output"].GetString()) == "archived");

    feed(*m, responses_round("resp_2", "It was 42.", false, 300), out, step);
    CHECK(m->end_round(out).empty());
    std::vector<std::string> names;
    auto evs = datas(out, &names);
    int created = 0, completed = 0;
    for (std::size_t i = 0; i < evs.size(); ++i) {
      CHECK(evs[i]["sequence_number"].GetInt() == static_cast<int>(i));
      created += names[i] == "response.created";
      completed += names[i] == "response.completed";
    }
    CHECK(created == 1);
    CHECK(completed == 1);
    int max_index = -1;
    for (auto& e : evs)
      if (e.HasMember("output_index")) {
        CHECK(e["output_index"].GetInt() <= max_index + 1);
        max_index = std::max(max_index, e["output_index"].GetInt());
      }
    CHECK(max_index == 3);  // two items per round
    const auto& r = evs.back()["response"];
    CHECK(std::string(r["id"].GetString()) == "resp_1");
    CHECK(r["output"].Size() == 4);
    CHECK(r["usage"]["input_tokens"].GetInt() == 400);
    CHECK(out.find("tokendiet_recall") == std::string::npos);
    CHECK(out.find("call_c") == std::string::npos);
  }
}

TEST_CASE("recall merge, Responses stream: one round without a recall call passes byte for byte") {
  const std::string plain = responses_round("resp_9", "Hi.", false, 5);
  auto m = RecallMerge::make(Api::openai_responses, true);
  std::string out;
  feed(*m, plain, out, 17);
  CHECK(m->end_round(out).empty());
  CHECK(out == plain);
}

TEST_CASE("recall merge, Gemini stream: chunks in order, the call cut, usage summed on the last chunk") {
  const std::string r1 =
      R"(data: {"candidates":[{"content":{"role":"model","parts":[{"text":"Let me ","thoughtSignature":"SIG"}]},"index":0}],"usageMetadata":{"promptTokenCount":100,"totalTokenCount":100},"responseId":"g1"})"
      "\n\n"
      R"(data: {"candidates":[{"content":{"role":"model","parts":[{"text":"look."},{"functionCall":{"name":"tokendiet_recall","args":{"id":"td-abc"}}},{"functionCall":{"name":"bash","args":{}}}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":100,"candidatesTokenCount":9,"totalTokenCount":109},"responseId":"g1"})"
      "\n\n";
  const std::string r2 =
      R"(data: {"candidates":[{"content":{"role":"model","parts":[{"text":"It was 42."}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":300,"candidatesTokenCount":5,"totalTokenCount":305},"responseId":"g2"})"
      "\n\n";
  auto m = RecallMerge::make(Api::gemini, true);
  REQUIRE(m);
  std::string out;
  feed(*m, r1, out, 13);
  const auto calls = m->end_round(out);
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].arguments == R"({"id":"td-abc"})");
  std::string body = R"({"contents":[{"role":"user","parts":[{"text":"go"}]}]})";
  REQUIRE(m->continue_with(body, {"archived"}));
  rapidjson::Document req;
  req.Parse(body.c_str());
  REQUIRE_FALSE(req.HasParseError());
  const auto& turn = req["contents"][1]["parts"];
  REQUIRE(turn.Size() == 3);  // two text parts (the signature kept), the recall call; not bash
  CHECK(std::string(turn[0]["thoughtSignature"].GetString()) == "SIG");
  CHECK(std::string(turn[2]["functionCall"]["name"].GetString()) == "tokendiet_recall");
  CHECK(std::string(req["contents"][2]["parts"][0]["functionResponse"]["response"]["output"].GetString()) ==
        "archived");

  feed(*m, r2, out, 13);
  CHECK(m->end_round(out).empty());
  auto chunks = datas(out);
  REQUIRE(chunks.size() == 3);
  std::string text;
  for (auto& c : chunks) {
    CHECK(std::string(c["responseId"].GetString()) == "g1");
    for (auto& p : c["candidates"][0]["content"]["parts"].GetArray()) {
      CHECK_FALSE(p.HasMember("functionCall"));
      if (p.HasMember("text")) text += p["text"].GetString();
    }
  }
  CHECK(text == "Let me look.It was 42.");
  CHECK(chunks.back()["usageMetadata"]["promptTokenCount"].GetInt() == 400);
  CHECK(chunks.back()["usageMetadata"]["totalTokenCount"].GetInt() == 414);
}

TEST_CASE(
    "recall merge, Gemini JSON: one response, every round's parts, usage summed; a stream's array stays an array") {
  const std::string r1 =
      R"({"candidates":[{"content":{"role":"model","parts":[{"text":"A"},{"functionCall":{"name":"tokendiet_recall","args":{"id":"td-abc"}}}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":10,"totalTokenCount":12},"responseId":"g1"})";
  const std::string r2 =
      R"({"candidates":[{"content":{"role":"model","parts":[{"text":"B"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":30,"totalTokenCount":33},"responseId":"g2"})";
  for (bool array : {false, true}) {
    auto m = RecallMerge::make(Api::gemini, false);
    std::string out;
    feed(*m, array ? "[" + r1 + "]" : r1, out, 20);
    REQUIRE(m->end_round(out).size() == 1);
    std::string body = R"({"contents":[]})";
    REQUIRE(m->continue_with(body, {"x"}));
    feed(*m, array ? "[" + r2 + "]" : r2, out, 20);
    CHECK(m->end_round(out).empty());
    rapidjson::Document d;
    d.Parse(out.c_str());
    REQUIRE_FALSE(d.HasParseError());
    CHECK(out.find("tokendiet_recall") == std::string::npos);
    if (array) {
      REQUIRE(d.IsArray());
      REQUIRE(d.Size() == 2);
      CHECK(d[1]["usageMetadata"]["promptTokenCount"].GetInt() == 40);
    } else {
      REQUIRE(d.IsObject());
      const auto& parts = d["candidates"][0]["content"]["parts"];
      REQUIRE(parts.Size() == 2);
      CHECK(std::string(parts[0]["text"].GetString()) == "A");
      CHECK(std::string(parts[1]["text"].GetString()) == "B");
      CHECK(d["usageMetadata"]["promptTokenCount"].GetInt() == 40);
      CHECK(std::string(d["responseId"].GetString()) == "g1");
    }
  }
}
