// Error answers the proxy makes itself (upstream unreachable, limits, policy
// outcomes), in the calling provider's own error JSON shape, so an SDK
// raises its usual typed error instead of failing to parse ours.
#pragma once

#include <string>
#include <string_view>

#include "proxy/phases/request_context.hpp"

namespace td::proxy {

// OpenAI/other: {"error":{"message","type","param","code"}}
// Anthropic:    {"type":"error","error":{"type","message"}}
// Gemini:       {"error":{"code","message","status"}}
// `status` is the HTTP status the body is sent with; the provider-specific
// type/status strings are derived from it. A 502 or 504 names its cause in
// OpenAI's `code`: `gateway_code` (the x-tokendiet-error code), by default
// "upstream_unreachable" or "upstream_timeout".
std::string provider_error_body(Provider provider, unsigned status, std::string_view message,
                                std::string_view gateway_code = {});

}  // namespace td::proxy
