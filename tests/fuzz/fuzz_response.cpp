// libFuzzer: an upstream response body through what reads it on the way to
// the client: the usage tee (JSON or SSE, every format), the include_usage
// scrubber, the error classifier and what recovery reads from an error
// (providers/context_window.hpp). The first byte picks the format and the
// piece size, so event and escape boundaries fall everywhere.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "providers/context_window.hpp"
#include "providers/openai_chat/include_usage.hpp"
#include "providers/response_error.hpp"
#include "providers/usage_fields.hpp"
#include "providers/usage_reader.hpp"

using namespace td::providers;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const Api api = static_cast<Api>(data[0] % 4);
  const bool sse = data[0] & 4;
  const std::size_t piece = 1 + (data[0] >> 3);
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);

  ResponseUsageTee tee(api, sse ? "text/event-stream" : "application/json");
  OpenAiUsageScrubber scrubber;
  std::string relayed;
  for (std::size_t i = 0; i < body.size(); i += piece) {
    const std::string_view bytes = body.substr(i, piece);
    tee.feed(bytes);
    scrubber.feed(bytes, relayed);
  }
  tee.finish();
  scrubber.finish(relayed);
  (void)tee.usage();
  // The error classifier, then what recovery reads from its message (F21).
  (void)context_overflow_in(classify_error_body(400, body).message);
  (void)context_overflow_in(body);
  (void)read_usage_object(api, body);
  return 0;
}
