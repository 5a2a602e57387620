// The request bodies of the recorded provider exchanges
// (tests/fixtures/wire/*.request.json) and our own bodies for each format
// (tests/fixtures/providers/, synthesized), serialised the ways clients do,
// pass every round-trip check.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include "bodies.hpp"
#include "providers/route.hpp"
#include "roundtrip.hpp"

using namespace td::providers;
using namespace td::providers::test;

namespace {

std::string path_of(std::string_view uri) {
  auto scheme = uri.find("://");
  auto slash = uri.find('/', scheme == std::string_view::npos ? 0 : scheme + 3);
  return std::string(uri.substr(slash));
}

}  // namespace

TEST_CASE("wire: every recorded request body round-trips in every style") {
  const auto files = fixture_files("wire", ".request.json");
  REQUIRE(files.size() >= 25);
  for (const auto& file : files) {
    std::string text = fixture(file);
    rapidjson::Document d;
    d.Parse(text.data(), text.size());
    REQUIRE(!d.HasParseError());
    auto route = chat_route("POST", path_of(d["uri"].GetString()));
    INFO(file);
    REQUIRE(route.has_value());
    for (Style s : {Style::Compact, Style::Pretty, Style::PythonAscii}) {
      std::string body = serialize(d["body"], s);
      check_all(route->api, body, file + " style " + std::to_string(int(s)));
      ParseOutcome p = parse_request(*route, body, &test_memo());
      REQUIRE(p.request.has_value());
      CHECK_FALSE(p.request->conversation.messages.empty());
      if (route->api == Api::gemini) CHECK(p.request->model == route->model);
    }
  }
}

TEST_CASE("synthesized bodies for each format round-trip") {
  struct Case {
    const char* file;
    Api format;
  };
  for (Case c :
       {Case{"providers/openai-chat.json", Api::openai_chat}, Case{"providers/anthropic.json", Api::anthropic},
        Case{"providers/gemini.json", Api::gemini}, Case{"providers/openai-responses.json", Api::openai_responses},
        Case{"providers/openai-responses-string.json", Api::openai_responses}}) {
    std::string body = fixture(c.file);
    check_all(c.format, body, c.file);
    rapidjson::Document d;
    d.Parse(body.data(), body.size());
    REQUIRE(!d.HasParseError());
    for (Style s : {Style::Compact, Style::Pretty, Style::PythonAscii})
      check_all(c.format, serialize(d, s), std::string(c.file) + " style " + std::to_string(int(s)));
  }
}
