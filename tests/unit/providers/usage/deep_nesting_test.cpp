// Upstream bytes nested a million deep: usage and error readers of every
// format (JSON bodies and SSE events), the error classifier and the tool
// renderer read no further than the depth guard allows, and do not crash.
#include <doctest/doctest.h>

#include <string>

#include "providers/openai_chat/tools_text.hpp"
#include "providers/response_error.hpp"
#include "providers/usage_reader.hpp"

using namespace td::providers;

namespace {
const std::string& deep() {
  static const std::string s = std::string(1'000'000, '[') + std::string(1'000'000, ']');
  return s;
}
}  // namespace

TEST_CASE("usage readers: a million-deep usage or error value in a JSON body or an SSE event") {
  for (Api api : {Api::openai_chat, Api::openai_responses, Api::gemini, Api::anthropic}) {
    for (std::string key : {"usage", "usageMetadata", "error", "response"}) {
      CAPTURE(name(api));
      CAPTURE(key);
      const std::string object = "{\"" + key + "\":" + deep() + "}";
      ResponseUsageTee json(api, "application/json");
      json.feed(object);
      json.finish();
      CHECK_FALSE(json.usage().present);
      ResponseUsageTee sse(api, "text/event-stream");
      sse.feed("event: message_delta\ndata: " + object + "\n\n");
      sse.feed("data: {\"type\":\"response.completed\",\"response\":{\"usage\":" + deep() + "}}\n\n");
      sse.finish();
      CHECK_FALSE(sse.usage().present);
    }
  }
}

TEST_CASE("error classifier: a million-deep error body is classified by status alone") {
  for (const std::string& body : {"{\"error\":" + deep() + "}", deep()}) {
    ResponseError e = classify_error_body(400, body);
    CHECK(e.is_error);
    CHECK_FALSE(e.context_length_exceeded);
  }
}

TEST_CASE("tool renderer: million-deep tool parameters render as nothing") {
  std::string tools = R"([{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"x":)";
  for (int i = 0; i < 1'000'000; ++i) tools += R"({"type":"array","items":)";
  tools += "{}" + std::string(1'000'000, '}') + "}}}}]";
  CHECK(render_openai_tools_json(tools).empty());
  CHECK_FALSE(render_openai_tools_json(R"([{"type":"function","function":{"name":"f"}}])").empty());
}
