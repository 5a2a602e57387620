// libFuzzer: the recall loop (docs/design.md §Recall) over upstream rounds
// the fuzzer writes: the recall filter as the relay runs it, its continuation
// bodies and the merge of every format. The first byte picks the format,
// SSE or JSON and the piece size; the rest is up to five rounds split at
// "\n\x1e\n". Checked on every input: a response of one round reaches the
// client byte for byte when it called no recall, and no continuation body
// grows past the body cap.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "providers/api.hpp"
#include "proxy/filters/recall_filter.hpp"
#include "proxy/phases/header_map.hpp"
#include "proxy/reports/recall_offer.hpp"

using namespace td;
using namespace td::proxy;

namespace {

struct Entries final : RecallSource {
  std::optional<std::string> read(std::string_view, std::string_view id) const override {
    if (id.size() < 4) return std::nullopt;
    std::string text;
    for (int i = 0; i < 400; ++i) text += "line " + std::to_string(i) + " of " + std::string(id.substr(0, 16)) + "\n";
    return text;
  }
};

const char* target_of(providers::Api api, bool sse) {
  switch (api) {
    case providers::Api::anthropic:
      return "/v1/messages";
    case providers::Api::openai_chat:
      return "/v1/chat/completions";
    case providers::Api::openai_responses:
      return "/v1/responses";
    case providers::Api::gemini:
      return sse ? "/v1beta/models/g:streamGenerateContent?alt=sse" : "/v1beta/models/g:generateContent";
  }
  return "/";
}

const char* body_of(providers::Api api) {
  switch (api) {
    case providers::Api::anthropic:
      return R"({"model":"c","messages":[{"role":"user","content":"go"}]})";
    case providers::Api::openai_chat:
      return R"({"model":"g","messages":[{"role":"user","content":"go"}]})";
    case providers::Api::openai_responses:
      return R"({"model":"g","input":"go"})";
    case providers::Api::gemini:
      return R"({"contents":[{"role":"user","parts":[{"text":"go"}]}]})";
  }
  return "{}";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto api = static_cast<providers::Api>(data[0] % 4);
  const bool sse = data[0] & 4;
  const std::size_t piece = 1 + (data[0] >> 3);
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::vector<std::string_view> rounds;
  while (rounds.size() < 5) {
    const std::size_t cut = rest.find("\n\x1e\n");
    rounds.push_back(rest.substr(0, cut));
    if (cut == std::string_view::npos) break;
    rest.remove_prefix(cut + 3);
  }

  Entries entries;
  RecallLimits limits;
  limits.max_calls = 3;
  limits.max_answer_bytes = 2048;
  std::string body = body_of(api);
  limits.max_body_bytes = body.size() + 64 * 1024;
  RecallFilter filter;
  RequestContext ctx;
  ctx.method = "POST";
  ctx.target = target_of(api, sse);
  ctx.key_fingerprint = "k";
  ctx.objects.publish<RecallOffer>(
      RecallOffer{std::shared_ptr<const RecallSource>(std::shared_ptr<void>(), &entries), limits});
  ctx.status = 200;
  SimpleHeaderMap head;
  head.set("content-type", sse ? "text/event-stream" : "application/json");
  filter.response_head_filter(ctx, head);

  std::string client;
  std::size_t used = 0;
  bool first_recalled = false;  // round 0 called tokendiet_recall
  for (;;) {
    const std::string_view r = rounds[used++];
    for (std::size_t i = 0; i < r.size(); i += piece) {
      std::string chunk(r.substr(i, piece));
      filter.response_body_filter(ctx, chunk, false);
      client += chunk;
    }
    std::string last;
    filter.response_body_filter(ctx, last, true);
    client += last;
    if (!ctx.continuation) break;
    if (used == 1) first_recalled = true;
    ctx.continuation = false;
    const bool next = used < rounds.size() && filter.continuation_filter(ctx, body);
    if (next && body.size() > limits.max_body_bytes) std::abort();  // past the cap
    if (!next) {
      std::string end;
      filter.response_body_filter(ctx, end, true);
      client += end;
      break;
    }
  }
  // One round that called no recall: the client got the upstream's bytes.
  if (used == 1 && !first_recalled && client != rounds[0]) std::abort();
  return 0;
}
