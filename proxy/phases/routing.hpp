// Which provider and upstream a request goes to, decided by its path alone:
// never by the Host header or an absolute-form URL's authority.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "proxy/phases/request_context.hpp"

namespace td::config {
struct Config;
}

namespace td::proxy {

struct Route {
  Provider provider = Provider::other;
  std::string_view upstream;  // key in config.upstreams (points into config or a literal)
  std::string_view model;     // from a Gemini path (/v1beta/models/{model}:...), else ""
};

// /v1/messages, /v1/messages/*                          → anthropic
// /v1beta/*, /v1alpha/*, /v1/models/{m}:generateContent,
//   :streamGenerateContent, :countTokens, :embedContent,
//   :batchEmbedContents                                 → gemini
// /v1/chat/completions, /v1/responses, /v1/embeddings, other /v1/*  → openai
// anything else                                         → config.default_upstream
// `path` excludes the query. The upstream name is the provider's name; the
// default route's provider is its upstream's name when that names a provider.
Route route_for_path(std::string_view path, const config::Config& config);

// The origin-form (path + query) of a request target: itself when it starts
// with '/', the part after the authority for an absolute-form URL
// (http://host/p?q → /p?q; the authority is ignored), nullopt otherwise.
std::optional<std::string_view> origin_form(std::string_view target);

// The target with the values of secret-bearing query parameters (key,
// api_key, access_token, …) replaced by "REDACTED", for logs: a name counts
// under every spelling a server would decode to it (docs/design.md §Ledger
// and metrics, Access log), and an absolute-form target's userinfo is hidden.
std::string redact_target(std::string_view target);

// `s` percent-decoded as a query component (`+` a space); an escape that is
// not two hex digits stays as it is.
std::string percent_decode(std::string_view s);

}  // namespace td::proxy
