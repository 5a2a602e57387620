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

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A query parameter's name as a server reads it: %XX decoded once.
std::string decoded_name(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (std::size_t i = 0; i < name.size(); ++i) {
    int hi = -1, lo = -1;
    if (name[i] == '%' && i + 2 < name.size() && (hi = hex_digit(name[i + 1])) >= 0 &&
        (lo = hex_digit(name[i + 2])) >= 0) {
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else {
      out.push_back(name[i]);
    }
  }
  return out;
}

bool secret_name(std::string_view name) {
  static constexpr std::array<std::string_view, 6> kSecret = {
      "key", "api_key", "apikey", "access_token", "token", "x-goog-api-key"};
  const std::string plain = decoded_name(name);
  for (auto s : kSecret)
    if (iequals(plain, s)) return true;
  return false;
}

}  // namespace

std::string redact_target(std::string_view target) {
  auto q = target.find('?');
  if (q == std::string_view::npos) return std::string(target);
  std::string out(target.substr(0, q + 1));
  auto query = target.substr(q + 1);
  while (true) {
    // '&' and ';' both separate parameters (servers differ; the log must not).
    const auto sep = query.find_first_of("&;");
    const auto param = query.substr(0, sep);
    const auto eq = param.find('=');
    if (eq != std::string_view::npos && secret_name(param.substr(0, eq))) {
      out.append(param.substr(0, eq));
      out.append("=REDACTED");
    } else {
      out.append(param);
    }
    if (sep == std::string_view::npos) break;
    out.push_back(query[sep]);
    query = query.substr(sep + 1);
  }
  return out;
}

}  // namespace td::proxy
