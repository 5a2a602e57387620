#include "proxy/phases/routing.hpp"

#include <array>

#include "config/config.hpp"
#include "proxy/phases/header_map.hpp"

namespace td::proxy {
namespace {

bool starts_with_segment(std::string_view path, std::string_view prefix) {
  // "/v1/messages" matches "/v1/messages" and "/v1/messages/x", not "/v1/messagesX".
  return path.starts_with(prefix) && (path.size() == prefix.size() || path[prefix.size()] == '/');
}

// Gemini RPC methods that appear as /…/models/{model}:{method}.
constexpr std::array<std::string_view, 5> kGeminiMethods = {
    "generateContent", "streamGenerateContent", "countTokens", "embedContent", "batchEmbedContents"};

// The {model} of /…/models/{model}:{method}, "" when the path is not of that form.
std::string_view gemini_model(std::string_view path, bool require_known_method) {
  auto m = path.find("/models/");
  if (m == std::string_view::npos) return {};
  auto rest = path.substr(m + 8);
  auto colon = rest.rfind(':');
  if (colon == std::string_view::npos || rest.find('/') != std::string_view::npos) return {};
  if (require_known_method) {
    auto method = rest.substr(colon + 1);
    bool known = false;
    for (auto k : kGeminiMethods) known |= method == k;
    if (!known) return {};
  }
  return rest.substr(0, colon);
}

Provider provider_named(std::string_view name) {
  if (name == "openai") return Provider::openai;
  if (name == "gemini") return Provider::gemini;
  if (name == "anthropic") return Provider::anthropic;
  return Provider::other;
}

}  // namespace

Route route_for_path(std::string_view path, const config::Config& config) {
  if (starts_with_segment(path, "/v1/messages")) return {Provider::anthropic, "anthropic", {}};
  if (starts_with_segment(path, "/v1beta") || starts_with_segment(path, "/v1alpha"))
    return {Provider::gemini, "gemini", gemini_model(path, false)};
  if (starts_with_segment(path, "/v1")) {
    if (path.starts_with("/v1/models/")) {
      auto model = gemini_model(path, true);
      if (!model.empty()) return {Provider::gemini, "gemini", model};
    }
    return {Provider::openai, "openai", {}};
  }
  return {provider_named(config.default_upstream), config.default_upstream, {}};
}

std::optional<std::string_view> origin_form(std::string_view target) {
  if (target.starts_with('/')) return target;
  std::string_view rest;
  if (target.size() > 7 && iequals(target.substr(0, 7), "http://"))
    rest = target.substr(7);
  else if (target.size() > 8 && iequals(target.substr(0, 8), "https://"))
    rest = target.substr(8);
  else
    return std::nullopt;
  auto end = rest.find_first_of("/?");
  if (end == std::string_view::npos) return std::string_view("/");
  if (rest[end] == '?') return std::nullopt;  // "http://h?q": no path; refuse rather than guess
  return rest.substr(end);
}

std::string redact_target(std::string_view target) {
  auto q = target.find('?');
  if (q == std::string_view::npos) return std::string(target);
  std::string out(target.substr(0, q + 1));
  auto query = target.substr(q + 1);
  bool first = true;
  while (true) {
    auto amp = query.find('&');
    auto param = query.substr(0, amp);
    if (!first) out.push_back('&');
    first = false;
    auto eq = param.find('=');
    auto name = param.substr(0, eq);
    static constexpr std::array<std::string_view, 6> kSecret = {
        "key", "api_key", "apikey", "access_token", "token", "x-goog-api-key"};
    bool secret = false;
    for (auto s : kSecret) secret |= iequals(name, s);
    if (secret && eq != std::string_view::npos) {
      out.append(name);
      out.append("=REDACTED");
    } else {
      out.append(param);
    }
    if (amp == std::string_view::npos) break;
    query = query.substr(amp + 1);
  }
  return out;
}

}  // namespace td::proxy
