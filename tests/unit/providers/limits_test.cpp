// What each format's limits count (providers/generation_settings.hpp): the
// output a request reserves against the quota and the context window, and
// whether a stream reports usage only when asked.
#include <doctest/doctest.h>

#include <string>

#include "providers/generation_settings.hpp"
#include "providers/request.hpp"
#include "providers/usage_fields.hpp"

using namespace td::providers;

namespace {

std::uint64_t reserved(Api api, const std::string& body) {
  ParseOutcome p = parse(api, body);
  REQUIRE(p.request.has_value());
  return reserved_output_tokens(*p.request);
}

}  // namespace

TEST_CASE("limits: the output cap counts against OpenAI's and Anthropic's limits, not Gemini's") {
  CHECK(reserved(Api::openai_chat,
                 R"({"model":"gpt-4o","max_tokens":900,"messages":[{"role":"user","content":"hi"}]})") == 900);
  CHECK(reserved(Api::openai_responses, R"({"model":"gpt-5","max_output_tokens":700,"input":"hi"})") == 700);
  CHECK(reserved(Api::anthropic,
                 R"({"model":"claude-sonnet-4-5","max_tokens":500,"messages":[{"role":"user","content":"hi"}]})") ==
        500);
  CHECK(reserved(
            Api::gemini,
            R"({"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"maxOutputTokens":800}})") ==
        0);
  CHECK(reserved(Api::openai_chat, R"({"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]})") ==
        0);  // no cap
  CHECK(limits_count_output(Api::openai_chat));
  CHECK(limits_count_output(Api::anthropic));
  CHECK_FALSE(limits_count_output(Api::gemini));
}

TEST_CASE("limits: only an OpenAI chat stream reports usage just when asked") {
  CHECK(stream_usage_on_request(Api::openai_chat));
  CHECK_FALSE(stream_usage_on_request(Api::openai_responses));
  CHECK_FALSE(stream_usage_on_request(Api::anthropic));
  CHECK_FALSE(stream_usage_on_request(Api::gemini));
}
