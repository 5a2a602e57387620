#include "quota/runway_status.hpp"

#include <algorithm>
#include <cmath>

namespace td::quota {

HeaderNote header_note(const providers::RateLimits& h, providers::SysTime received) {
  HeaderNote n;
  n.seen = received;
  n.requests_limit = h.requests.limit;
  n.requests_remaining = h.requests.remaining;
  n.requests_reset = h.requests.reset;
  // Anthropic's input window (what its runway's input bucket counts), not its combined one.
  const providers::RateWindow& tokens = h.input_tokens.known() ? h.input_tokens : h.tokens;
  n.tokens_remaining = tokens.remaining;
  n.tokens_reset = tokens.reset;
  return n;
}

std::optional<RunwayStatus> runway_status(std::string_view key, const pruning::Runway& rw) {
  const std::size_t a = key.find('\x1f');
  const std::size_t b = a == std::string_view::npos ? a : key.find('\x1f', a + 1);
  if (b == std::string_view::npos) return std::nullopt;
  RunwayStatus s;
  const std::string_view provider = key.substr(0, a);
  for (auto p : {providers::Provider::openai, providers::Provider::anthropic, providers::Provider::gemini})
    if (provider == providers::to_string(p)) s.provider = p;
  s.client = std::string(key.substr(a + 1, b - a - 1));
  s.group = std::string(key.substr(b + 1));
  // The tightest bucket (the lowest level), as the explain header and
  // /metrics report it (pruning::Runway::left_after with nothing asked).
  const pruning::RunwayBucket* tightest = nullptr;
  for (const pruning::RunwayBucket* c : {&rw.combined, &rw.input, &rw.output})
    if (c->known() && (!tightest || c->level < tightest->level)) tightest = c;
  if (!tightest) return s;
  s.limit = tightest->limit;
  s.level = std::min(tightest->level, tightest->limit);
  if (s.level < s.limit)
    s.full_in =
        std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil((s.limit - s.level) / tightest->refill_per_ms)));
  return s;
}

}  // namespace td::quota
