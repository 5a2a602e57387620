// The wire format of a body read from a file (providers/body_format.hpp).
#include <doctest/doctest.h>

#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "providers/body_format.hpp"

using namespace td::providers;

namespace {
std::optional<Api> format_of(const std::string& body) {
  std::string why;
  return detect_body_format(body, why);
}
std::string fixture(const char* rel) {
  std::ifstream in(std::string(TD_FIXTURES) + "/" + rel, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

TEST_CASE("each provider's recorded request is read as its own format") {
  CHECK(format_of(fixture("providers/anthropic-claude-code-recorded.json")) == Api::anthropic);
  CHECK(format_of(fixture("providers/anthropic-claude-code-default.json")) == Api::anthropic);
  CHECK(format_of(fixture("replay/tau-bench-2.json")) == Api::openai_chat);  // a trajectory: chat messages
}

TEST_CASE("the body's shape decides") {
  CHECK(format_of(R"({"contents":[{"role":"user","parts":[{"text":"hi"}]}]})") == Api::gemini);
  CHECK(format_of(R"({"model":"gpt-5","input":"hi"})") == Api::openai_responses);
  CHECK(format_of(R"({"model":"gpt-5","input":[{"role":"user","content":"hi"}]})") == Api::openai_responses);
  CHECK(format_of(R"({"model":"m","system":"s","messages":[{"role":"user","content":"hi"}]})") == Api::anthropic);
  CHECK(
      format_of(
          R"({"model":"m","messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"n","input":{}}]}]})") ==
      Api::anthropic);
  CHECK(format_of(R"({"model":"m","messages":[{"role":"system","content":"s"},{"role":"user","content":"hi"}]})") ==
        Api::openai_chat);
  CHECK(format_of(R"({"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]})") ==
        Api::openai_chat);  // both adapters read it alike
}

TEST_CASE("not a chat body: nothing, and why") {
  std::string why;
  CHECK_FALSE(detect_body_format("[1,2]", why));
  CHECK(why == "not a JSON object");
  CHECK_FALSE(detect_body_format(R"({"prompt":"hi"})", why));
  CHECK(why.find("not a chat request body") != std::string::npos);
  CHECK_FALSE(detect_body_format(R"({"messages":5})", why));
}
