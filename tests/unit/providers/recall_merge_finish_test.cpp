// A round that called tokendiet_recall but is not continued (the round cap,
// a continuation that failed) ends without its recall calls in every format:
// the client's own calls are released, and with none left the stop reason
// is the end of the turn (docs/design.md §Recall).
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <string>

#include "providers/recall_merge.hpp"
#include "recall_rounds.hpp"

using namespace td::providers;
using recall_rounds::Round;

namespace {

const char* api_name(Api api) {
  switch (api) {
    case Api::anthropic:
      return "anthropic";
    case Api::openai_chat:
      return "openai_chat";
    case Api::openai_responses:
      return "responses";
    case Api::gemini:
      return "gemini";
  }
  return "";
}

void feed(RecallMerge& m, const std::string& s, std::string& out) {
  for (std::size_t i = 0; i < s.size(); i += 29) m.feed(std::string_view(s).substr(i, 29), out);
}

// The stop reasons `out` states, as "name=value" for each one met.
std::string stop_reasons(const std::string& out) {
  std::string found;
  for (const char* key : {"\"stop_reason\"", "\"finish_reason\"", "\"finishReason\""}) {
    for (std::size_t p = out.find(key); p != std::string::npos; p = out.find(key, p + 1)) {
      std::size_t v = out.find_first_not_of(": ", p + std::char_traits<char>::length(key));
      if (out.compare(v, 4, "null") == 0) continue;
      const std::size_t end = out.find('"', v + 1);
      found += out.substr(v + 1, end - v - 1) + " ";
    }
  }
  return found;
}

// Every JSON document in `out` parses: the body itself, or each SSE event's data.
bool well_formed(const std::string& out, bool sse) {
  if (!sse) {
    rapidjson::Document d;
    d.Parse(out.c_str());
    return !d.HasParseError();
  }
  for (std::size_t p = out.find("data: "); p != std::string::npos; p = out.find("data: ", p + 1)) {
    const std::string data = out.substr(p + 6, out.find('\n', p) - p - 6);
    if (data == "[DONE]") continue;
    rapidjson::Document d;
    d.Parse(data.c_str());
    if (d.HasParseError()) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("recall merge, every format: the round cap ends the answer without the recall calls") {
  for (Api api : recall_rounds::kApis) {
    for (bool sse : {true, false}) {
      for (bool client_call : {false, true}) {
        CAPTURE(api_name(api));
        CAPTURE(sse);
        CAPTURE(client_call);
        Round r;
        r.recalls = {R"({"id":"td-aaa"})", R"({"id":"td-bbb","lines":"1-2"})"};
        r.client_call = client_call;
        auto m = RecallMerge::make(api, sse);
        std::string out;
        feed(*m, recall_rounds::round(api, r, sse), out);
        REQUIRE(m->end_round(out).size() == 2);
        m->finish(out);
        CHECK(out.find("tokendiet_recall") == std::string::npos);
        CHECK(out.find("td-aaa") == std::string::npos);
        CHECK(out.find("Let me look.") != std::string::npos);
        CHECK(well_formed(out, sse));
        CHECK((out.find("\"bash\"") != std::string::npos) == client_call);
        const std::string stops = stop_reasons(out);
        if (api == Api::anthropic) CHECK(stops == (client_call ? "tool_use " : "end_turn "));
        if (api == Api::openai_chat) CHECK(stops == (client_call ? "tool_calls " : "stop "));
        if (api == Api::gemini) CHECK(stops.find("STOP") != std::string::npos);
        if (api == Api::openai_chat && sse && client_call) {
          // The client's call is its first: index 0, as if no recall had been made.
          CHECK(out.find("\"index\":0,\"id\":\"call_c\"") != std::string::npos);
          CHECK(out.find("\"index\":2") == std::string::npos);
        }
      }
    }
  }
}

TEST_CASE("recall merge, every format: a continuation that fails ends the answer without the round's calls") {
  for (Api api : recall_rounds::kApis) {
    for (bool sse : {true, false}) {
      CAPTURE(api_name(api));
      CAPTURE(sse);
      Round r;
      r.recalls = {R"({"id":"td-aaa"})"};
      r.client_call = true;
      auto m = RecallMerge::make(api, sse);
      std::string out;
      feed(*m, recall_rounds::round(api, r, sse), out);
      REQUIRE(m->end_round(out).size() == 1);
      std::string body = recall_rounds::request(api);
      REQUIRE(m->continue_with(body, {"the archived text"}));
      m->finish(out);  // the next round never came
      CHECK(out.find("tokendiet_recall") == std::string::npos);
      CHECK(out.find("Let me look.") != std::string::npos);
      CHECK(well_formed(out, sse));
      const std::string stops = stop_reasons(out);
      if (api == Api::anthropic) CHECK(stops == "end_turn ");
      if (api == Api::openai_chat) CHECK(stops == "stop ");
    }
  }
}

TEST_CASE("recall merge, Responses stream: the client's sequence numbers start where the upstream's do") {
  Round r;
  r.client_call = true;
  const std::string plain = recall_rounds::round(Api::openai_responses, r, true);
  REQUIRE(plain.find("\"sequence_number\": 1,") != std::string::npos);
  Round first;
  first.recalls = {R"({"id":"td-aaa"})"};
  auto m = RecallMerge::make(Api::openai_responses, true);
  std::string out;
  feed(*m, recall_rounds::round(Api::openai_responses, first, true), out);
  REQUIRE(m->end_round(out).size() == 1);
  std::string body = recall_rounds::request(Api::openai_responses);
  REQUIRE(m->continue_with(body, {"x"}));
  feed(*m, plain, out);
  REQUIRE(m->end_round(out).empty());
  // Counted on from the first round's 1 across both rounds, no gap, no repeat.
  int expected = 1;
  for (std::size_t p = out.find("\"sequence_number\""); p != std::string::npos;
       p = out.find("\"sequence_number\"", p + 1)) {
    const std::size_t v = out.find_first_not_of(": ", p + 17);
    CHECK(std::stoi(out.substr(v)) == expected);
    ++expected;
  }
  CHECK(expected > 8);
}
