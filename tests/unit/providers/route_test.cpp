#include <doctest/doctest.h>

#include "providers/route.hpp"

using namespace td::providers;

TEST_CASE("route: the path picks the wire format") {
  auto fmt = [](const char* method, const char* target) { return chat_route(method, target); };
  CHECK(fmt("POST", "/v1/chat/completions")->api == Api::openai_chat);
  CHECK(fmt("POST", "/chat/completions")->api == Api::openai_chat);
  CHECK(fmt("POST", "/v1beta/openai/chat/completions?x=1")->api == Api::openai_chat);
  CHECK(fmt("POST", "/openai/deployments/gpt4/chat/completions?api-version=2024-10-21")->api == Api::openai_chat);
  CHECK(fmt("POST", "/v1/responses")->api == Api::openai_responses);
  CHECK(fmt("POST", "/v1/messages?beta=true")->api == Api::anthropic);
  auto g = fmt("POST", "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse");
  REQUIRE(g);
  CHECK(g->api == Api::gemini);
  CHECK(g->model == "gemini-2.5-pro");
  CHECK(g->stream);
  auto v = fmt("POST", "/v1beta1/projects/p/locations/us/publishers/google/models/gemini-3.5-flash:generateContent");
  REQUIRE(v);
  CHECK(v->model == "gemini-3.5-flash");
  CHECK_FALSE(v->stream);

  // Not chat requests: forwarded untouched.
  CHECK_FALSE(fmt("GET", "/v1/chat/completions"));
  CHECK_FALSE(fmt("POST", "/v1/messages/count_tokens"));
  CHECK_FALSE(fmt("POST", "/v1/threads/t1/messages"));
  CHECK_FALSE(fmt("GET", "/v1/responses/resp_1"));
  CHECK_FALSE(fmt("POST", "/v1/responses/resp_1/cancel"));
  CHECK_FALSE(fmt("POST", "/v1/embeddings"));
  CHECK_FALSE(fmt("POST", "/v1beta/models/gemini-2.5-pro:countTokens"));
  CHECK_FALSE(fmt("POST", "/v1beta/models/text-embedding-004:embedContent"));
  CHECK_FALSE(fmt("GET", "/v1/models"));
}
