// What a provider's context-length error says about the window, and the
// windows of common models (providers/context_window.hpp, F21).
#include <doctest/doctest.h>

#include "providers/context_window.hpp"
#include "providers/response_error.hpp"

using namespace td::providers;

TEST_CASE("context overflow: each provider's wording gives the window and its count of the prompt") {
  struct Case {
    const char* message;
    std::uint64_t window, prompt, output;
  };
  const Case cases[] = {
      {"This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens. "
       "Please reduce the length of the messages.",
       128000, 130512, 0},
      {"This model's maximum context length is 8192 tokens. However, you requested 9000 tokens (7000 in the "
       "messages, 2000 in the completion). Please reduce the length of the messages or completion.",
       8192, 7000, 2000},
      {"This model's maximum context length is 4097 tokens, however you requested 5000 tokens", 4097, 5000, 0},
      {"prompt is too long: 208310 tokens > 200000 maximum", 200000, 208310, 0},
      {"input length and `max_tokens` exceed context limit: 197000 + 8192 > 200000, decrease input length or "
       "`max_tokens` and try again",
       200000, 197000, 8192},
      {"The input token count (1234567) exceeds the maximum number of tokens allowed (1048576).", 1048576, 1234567, 0},
      {"Unable to submit request because the input token count is 1100000 but model only supports up to 1048576. "
       "Reduce the input token count and try again.",
       1048576, 1100000, 0},
  };
  for (const Case& c : cases) {
    CAPTURE(c.message);
    const ContextOverflow o = context_overflow_in(c.message);
    CHECK(o.window == c.window);
    CHECK(o.prompt == c.prompt);
    CHECK(o.output == c.output);
  }
  // Other errors, and the limit's number where no count follows, say nothing made up.
  CHECK(context_overflow_in("Rate limit reached").window == 0);
  CHECK(context_overflow_in("prompt is too long").window == 0);
  CHECK(context_overflow_in("maximum context length is").window == 0);
  CHECK(context_overflow_in("maximum context length is\n128000").window == 0);
}

TEST_CASE("context overflow: the fixtures' errors are recognised and read") {
  const ResponseError e = classify_error_body(
      400,
      R"({"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 5 tokens > 4 maximum"}})");
  CHECK(e.context_length_exceeded);
  CHECK(context_overflow_in(e.message).window == 4);
}

TEST_CASE("known context windows: the common families, a provider prefix ignored, unknown 0") {
  CHECK(known_context_window("gpt-4o-mini") == 128000);
  CHECK(known_context_window("gpt-4.1-mini") == 1047576);
  CHECK(known_context_window("gpt-4-turbo-2024-04-09") == 128000);
  CHECK(known_context_window("gpt-4-0613") == 8192);
  CHECK(known_context_window("gpt-5.1-codex") == 400000);
  CHECK(known_context_window("o1-mini") == 128000);
  CHECK(known_context_window("o3-pro") == 200000);
  CHECK(known_context_window("claude-sonnet-4-5") == 200000);
  CHECK(known_context_window("anthropic/claude-opus-4-1") == 200000);
  CHECK(known_context_window("gemini-2.5-pro") == 1048576);
  CHECK(known_context_window("gemini-1.5-pro-002") == 2097152);
  CHECK(known_context_window("deepseek/deepseek-chat") == 128000);
  CHECK(known_context_window("llama-3-70b") == 0);
  CHECK(known_context_window("") == 0);
}
