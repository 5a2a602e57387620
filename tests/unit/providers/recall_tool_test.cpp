#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <string>

#include "providers/recall_tool.hpp"

using namespace td::providers;

namespace {

rapidjson::Document parse(const std::string& s) {
  rapidjson::Document d;
  d.Parse(s.c_str());
  REQUIRE_FALSE(d.HasParseError());
  return d;
}

}  // namespace

TEST_CASE("recall tool: OpenAI chat's shape, after the client's tools, the bytes before unchanged") {
  const std::string before =
      R"({"model":"gpt-5","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"bash","parameters":{}}}] ,"stream":true})";
  std::string body = before;
  REQUIRE(append_recall_tool(Api::openai_chat, body));
  const auto cut = before.find("}}]") + 2;
  CHECK(body.substr(0, cut) == before.substr(0, cut));
  auto d = parse(body);
  REQUIRE(d["tools"].Size() == 2);
  const auto& t = d["tools"][1];
  CHECK(std::string(t["type"].GetString()) == "function");
  CHECK(std::string(t["function"]["name"].GetString()) == "tokendiet_recall");
  CHECK(std::string(t["function"]["parameters"]["required"][0].GetString()) == "id");
  CHECK(t["function"]["parameters"]["properties"].HasMember("lines"));
  CHECK(d["stream"].GetBool());
  // Never twice.
  std::string again = body;
  CHECK_FALSE(append_recall_tool(Api::openai_chat, again));
  CHECK(again == body);
}

TEST_CASE("recall tool: Responses' flat function shape; a body without tools gets a tools member at its end") {
  const std::string before = R"({"model":"gpt-5","input":"hi"})";
  std::string body = before;
  REQUIRE(append_recall_tool(Api::openai_responses, body));
  CHECK(body.substr(0, before.size() - 1) == before.substr(0, before.size() - 1));
  auto d = parse(body);
  const auto& t = d["tools"][0];
  CHECK(std::string(t["type"].GetString()) == "function");
  CHECK(std::string(t["name"].GetString()) == "tokendiet_recall");
  CHECK(t["parameters"]["properties"].HasMember("id"));
}

TEST_CASE("recall tool: Anthropic's input_schema shape, into an empty tools array") {
  std::string body = R"({"model":"claude-sonnet-4-5","max_tokens":10,"tools":[ ],"messages":[]})";
  REQUIRE(append_recall_tool(Api::anthropic, body));
  auto d = parse(body);
  REQUIRE(d["tools"].Size() == 1);
  const auto& t = d["tools"][0];
  CHECK(std::string(t["name"].GetString()) == "tokendiet_recall");
  CHECK(t.HasMember("description"));
  CHECK(std::string(t["input_schema"]["type"].GetString()) == "object");
  CHECK_FALSE(t.HasMember("type"));
}

TEST_CASE("recall tool: Gemini gets its own functionDeclarations tool after the client's") {
  std::string body = R"({"contents":[],"tools":[{"functionDeclarations":[{"name":"ls"}]}]})";
  REQUIRE(append_recall_tool(Api::gemini, body));
  auto d = parse(body);
  REQUIRE(d["tools"].Size() == 2);
  CHECK(std::string(d["tools"][0]["functionDeclarations"][0]["name"].GetString()) == "ls");
  CHECK(std::string(d["tools"][1]["functionDeclarations"][0]["name"].GetString()) == "tokendiet_recall");
}

TEST_CASE("recall tool: a null tools member becomes the array; what is not a JSON object or array is left") {
  std::string body = R"({"messages":[],"tools":null})";
  REQUIRE(append_recall_tool(Api::openai_chat, body));
  CHECK(parse(body)["tools"].Size() == 1);
  std::string odd = R"({"tools":"x"})";
  CHECK_FALSE(append_recall_tool(Api::openai_chat, odd));
  CHECK(odd == R"({"tools":"x"})");
  std::string arr = "[1]";
  CHECK_FALSE(append_recall_tool(Api::anthropic, arr));
}

TEST_CASE("recall tool: arguments and the text the model gets back") {
  auto a = parse_recall_arguments(R"({"id":"td-abc","lines":"2-3"})");
  REQUIRE(a);
  CHECK(a->id == "td-abc");
  CHECK(a->first_line == 2);
  CHECK(a->last_line == 3);
  const std::optional<std::string> text = std::string("one\ntwo\nthree\nfour\n");
  CHECK(recall_result_text(*a, text, 1 << 20) == "two\nthree\n");
  CHECK(recall_result_text({"td-abc", 0, 0}, text, 1 << 20) == *text);
  CHECK(recall_result_text({"td-abc", 3, 0}, text, 1 << 20) == "three\nfour\n");
  CHECK(recall_result_text({"td-abc", 4, 4}, text, 1 << 20) == "four\n");
  CHECK(recall_result_text({"td-abc", 9, 12}, text, 1 << 20).find("are empty") != std::string::npos);
  CHECK(recall_result_text({"td-zzz", 0, 0}, std::nullopt, 1 << 20).find("unknown id") != std::string::npos);
  auto one = parse_recall_arguments(R"({"id":"td-x","lines":"7"})");
  REQUIRE(one);
  CHECK(one->first_line == 7);
  CHECK(one->last_line == 7);
  auto bad = parse_recall_arguments(R"({"id":"td-x","lines":"seven"})");
  REQUIRE(bad);
  CHECK(bad->first_line == 0);
  CHECK_FALSE(parse_recall_arguments(R"({"lines":"1-2"})"));
  CHECK_FALSE(parse_recall_arguments("not json"));
}

TEST_CASE("recall tool: an answer over the bound is cut at a line and names the lines to ask for next") {
  std::string text;
  for (int i = 1; i <= 100; ++i) text += "line " + std::to_string(i) + " of the output\n";  // 20-21 bytes a line
  const std::string whole = recall_result_text({"td-abc", 0, 0}, text, 1 << 20);
  CHECK(whole == text);
  const std::string part = recall_result_text({"td-abc", 0, 0}, text, 215);
  // Lines 1-9 are 21 bytes each (189), line 10 is 22: 211 bytes fit, line 11 does not.
  CHECK(part.rfind("line 1 of the output\n", 0) == 0);
  CHECK(part.find("line 10 of the output\n") != std::string::npos);
  CHECK(part.find("line 11 ") == std::string::npos);
  CHECK(part.find("[tokendiet_recall: lines 1-10 of 100 shown; an answer holds at most 215 bytes: ask for lines 11-100 "
                  "next]") != std::string::npos);
  // A range: the bound counts from its first line, the next range ends where it asked.
  const std::string range = recall_result_text({"td-abc", 50, 60}, text, 70);
  CHECK(range.rfind("line 50 of the output\nline 51 of the output\nline 52 of the output\n", 0) == 0);
  CHECK(range.find("lines 50-52 of 100 shown") != std::string::npos);
  CHECK(range.find("ask for lines 53-60 next") != std::string::npos);
  // The lines shown whole, which recalled_lines keeps (docs/design.md §Recall).
  std::pair<std::uint32_t, std::uint32_t> shown{9, 9};
  recall_result_text({"td-abc", 50, 60}, text, 70, &shown);
  CHECK(shown == std::pair<std::uint32_t, std::uint32_t>{50, 52});
  recall_result_text({"td-abc", 50, 60}, text, 1 << 20, &shown);
  CHECK(shown == std::pair<std::uint32_t, std::uint32_t>{50, 60});
  recall_result_text({"td-abc", 0, 0}, text, 1 << 20, &shown);
  CHECK(shown == std::pair<std::uint32_t, std::uint32_t>{1, 100});
  recall_result_text({"td-zzz", 0, 0}, std::nullopt, 1 << 20, &shown);
  CHECK(shown == std::pair<std::uint32_t, std::uint32_t>{0, 0});
  // One line longer than the bound: its start, cut on a character, and where to go on.
  const std::string wide = std::string(300, 'x') + "\xc3\xa9" + std::string(10, 'y') + "\nshort\n";
  const std::string cut = recall_result_text({"td-w", 0, 0}, wide, 301);
  CHECK(cut.rfind(std::string(300, 'x') + "\n[tokendiet_recall: line 1 of 2 shown in part (its first 300 of 312 bytes)",
                  0) == 0);
  CHECK(cut.find("ask for lines 2-2 next") != std::string::npos);
  // Within the bound: the asked lines exactly, no notice.
  CHECK(recall_result_text({"td-abc", 99, 100}, text, 200) == "line 99 of the output\nline 100 of the output\n");
}

TEST_CASE("recall tool: a notice's name passes as the id, its line range after a colon") {
  auto a = parse_recall_arguments(R"({"id":"t0123abcd:41-160"})");
  REQUIRE(a);
  CHECK(a->id == "t0123abcd");
  CHECK(a->first_line == 41);
  CHECK(a->last_line == 160);
  auto one = parse_recall_arguments(R"({"id":"t0123abcd:7"})");
  REQUIRE(one);
  CHECK(one->id == "t0123abcd");
  CHECK(one->first_line == 7);
  CHECK(one->last_line == 7);
  // An explicit "lines" wins over the id's range.
  auto both = parse_recall_arguments(R"({"id":"t0123abcd:41-160","lines":"50-51"})");
  REQUIRE(both);
  CHECK(both->id == "t0123abcd");
  CHECK(both->first_line == 50);
  CHECK(both->last_line == 51);
  auto whole = parse_recall_arguments(R"({"id":"t0123abcd"})");
  REQUIRE(whole);
  CHECK(whole->first_line == 0);
}
