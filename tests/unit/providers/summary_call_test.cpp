// The recap summarizer's request and answer per provider (providers/summary_call.hpp).
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <fstream>
#include <sstream>
#include <string>

#include "providers/summary_call.hpp"

using namespace td::providers;

namespace {

std::string fixture(const std::string& path) {
  std::ifstream in(std::string(TD_FIXTURES) + "/" + path, std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("summary request: each provider's own shape, one user message, the cap") {
  rapidjson::Document d;
  d.Parse(summary_request_body("openai", "gpt-4.1-mini", "say \"hi\"\n", 300).c_str());
  REQUIRE(d.IsObject());
  CHECK(std::string(d["model"].GetString()) == "gpt-4.1-mini");
  CHECK(d["max_completion_tokens"].GetUint() == 300);
  CHECK(std::string(d["messages"][0]["role"].GetString()) == "user");
  CHECK(std::string(d["messages"][0]["content"].GetString()) == "say \"hi\"\n");
  CHECK(summary_request_path("openai", "m") == "/v1/chat/completions");

  d.Parse(summary_request_body("anthropic", "claude-haiku-4-5", "x", 200).c_str());
  CHECK(d["max_tokens"].GetUint() == 200);
  CHECK(std::string(d["messages"][0]["content"].GetString()) == "x");
  CHECK(summary_request_path("anthropic", "m") == "/v1/messages");

  d.Parse(summary_request_body("gemini", "gemini-2.5-flash", "x", 100).c_str());
  CHECK(std::string(d["contents"][0]["parts"][0]["text"].GetString()) == "x");
  CHECK(d["generationConfig"]["maxOutputTokens"].GetUint() == 100);
  CHECK(summary_request_path("gemini", "gemini-2.5-flash") == "/v1beta/models/gemini-2.5-flash:generateContent");
  CHECK(summary_request_path("other", "m").empty());
}

TEST_CASE("summary answer: the text of recorded answers; nothing from errors or junk") {
  CHECK(summary_response_text("openai", fixture("wire/openai-chat-nonstream.json")) == "six");
  CHECK(summary_response_text("gemini", fixture("wire/gemini-generatecontent-verbatim.json")) == "six");
  const auto anthropic = summary_response_text("anthropic", fixture("synth/anthropic-messages-nonstream.json"));
  REQUIRE(anthropic);
  CHECK(anthropic->find("This is a straightforward question") == std::string::npos);  // not the thinking
  CHECK_FALSE(summary_response_text("openai", fixture("wire/anthropic-error-model-not-found.json")));
  CHECK_FALSE(summary_response_text("anthropic", "{\"content\":[{\"type\":\"text\",\"text\":\"  \"}]}"));
  CHECK_FALSE(summary_response_text("openai", "not json"));
  // Nested past the limit every reader of upstream JSON keeps: refused, not parsed.
  CHECK_FALSE(
      summary_response_text("openai", R"({"choices":)" + std::string(100000, '[') + std::string(100000, ']') + "}"));
  CHECK(summary_response_text("anthropic", "{\"content\":[{\"type\":\"text\",\"text\":\" a \\n\"}]}") == "a");
}
