#include "proxy/phases/routing.hpp"

#include <algorithm>
#include <array>
#include <vector>

#include "config/config.hpp"
#include "proxy/phases/header_map.hpp"

namespace td::proxy {
namespace {

bool starts_with_segment(std::string_view path, std::string_view prefix) {
  // "/v1/messages" matches "/v1/messages" and "/v1/messages/x", not "/v1/messagesX".
  return path.starts_with(prefix) && (path.size() == prefix.size() || path[prefix.size()] == '/');
}

// Gemini RPC methods that appear as /…/models/{model}:{method}.
constexpr std::array<std::string_view, 5> kGeminiMethods = {"generateContent", "streamGenerateContent", "countTokens",
                                                            "embedContent", "batchEmbedContents"};

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

// A query as a server reads it, each byte with the offset in the raw query of
// the text it came from, so what is found in the decoded form is hidden in the
// raw one (docs/design.md §Ledger and metrics, Access log).
struct Decoded {
  std::string text;
  std::vector<std::size_t> raw;  // raw[i]: where text[i] starts in the raw query
};

// One round of decoding: %XX to its byte, '+' to a space (form encoding).
// Returns false when nothing changed.
bool decode_once(Decoded& d) {
  Decoded out;
  out.text.reserve(d.text.size());
  out.raw.reserve(d.text.size());
  bool changed = false;
  for (std::size_t i = 0; i < d.text.size(); ++i) {
    int hi = -1, lo = -1;
    if (d.text[i] == '%' && i + 2 < d.text.size() && (hi = hex_digit(d.text[i + 1])) >= 0 &&
        (lo = hex_digit(d.text[i + 2])) >= 0) {
      out.text.push_back(static_cast<char>(hi * 16 + lo));
      out.raw.push_back(d.raw[i]);
      i += 2;
      changed = true;
    } else {
      out.text.push_back(d.text[i] == '+' ? ' ' : d.text[i]);
      out.raw.push_back(d.raw[i]);
      changed |= d.text[i] == '+';
    }
  }
  d = std::move(out);
  return changed;
}

// Rounds of decoding: a server decodes once, a proxy or framework in front of
// it may have decoded already; more rounds only hide more.
constexpr int kDecodeRounds = 4;

// A name reduced to what tells the secret names apart: ASCII letters (lower
// case) and digits. Servers differ on case, '+'/space, '_'/'-'/'.', control
// bytes and NUL, so every such byte is dropped rather than one reading chosen.
std::string canonical(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (c >= 'A' && c <= 'Z')
      out.push_back(static_cast<char>(c - 'A' + 'a'));
    else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
      out.push_back(c);
  }
  return out;
}

bool secret_canonical(std::string_view name) {
  // key, api_key/apikey/api-key, access_token, token, x-goog-api-key, x-api-key, authorization.
  static constexpr std::array<std::string_view, 7> kSecret = {"key",         "apikey",  "accesstoken",  "token",
                                                              "xgoogapikey", "xapikey", "authorization"};
  const std::string c = canonical(name);
  for (auto s : kSecret)
    if (c == s) return true;
  return false;
}

// A decoded name names a secret as itself, or cut where a C string (NUL) or a
// PHP-style array name ('[') ends it.
bool secret_name(std::string_view name) {
  if (secret_canonical(name)) return true;
  for (char cut : {'\0', '['}) {
    const auto at = name.find(cut);
    if (at != std::string_view::npos && secret_canonical(name.substr(0, at))) return true;
  }
  return false;
}

// "scheme://user:pass@host…": the userinfo hidden (a target refused as not a
// path is logged as it came).
std::string redact_userinfo(std::string_view target) {
  const auto scheme = target.find("://");
  if (target.starts_with('/') || scheme == std::string_view::npos) return std::string(target);
  const auto host = scheme + 3;
  const auto end = std::min(target.find_first_of("/?#", host), target.size());
  const auto at = target.substr(0, end).rfind('@');
  if (at == std::string_view::npos || at < host) return std::string(target);
  return std::string(target.substr(0, host)) + "REDACTED" + std::string(target.substr(at));
}

}  // namespace

std::string redact_target(std::string_view target) {
  const std::string plain = redact_userinfo(target);
  const auto q = plain.find('?');
  if (q == std::string::npos) return plain;
  const std::string_view query = std::string_view(plain).substr(q + 1);
  Decoded d{std::string(query), {}};
  d.raw.resize(query.size());
  for (std::size_t i = 0; i < query.size(); ++i) d.raw[i] = i;
  for (int round = 0; round < kDecodeRounds && decode_once(d); ++round) {
  }
  // Parameters split where the decoded query has '&' or ';' (servers differ on
  // ';'; a server that decodes before splitting splits at an encoded '&' too),
  // the name ending at the first decoded '=' (an encoded '=' ends it for such
  // a server as well). A secret's value is hidden up to the next separator
  // that is one in the raw query, where a server that splits first ends it.
  std::string out(plain.substr(0, q + 1));
  std::size_t copied = 0;  // raw query bytes already in `out`
  const auto raw_at = [&](std::size_t i) { return i < d.raw.size() ? d.raw[i] : query.size(); };
  const auto separator = [&](std::size_t from, bool raw_only) {
    for (auto i = from; i < d.text.size(); ++i)
      if ((d.text[i] == '&' || d.text[i] == ';') && (!raw_only || query[d.raw[i]] == d.text[i])) return i;
    return d.text.size();
  };
  std::size_t begin = 0;
  while (begin <= d.text.size()) {
    auto sep = separator(begin, false);
    const auto eq = d.text.find('=', begin);
    if (eq < sep && secret_name(std::string_view(d.text).substr(begin, eq - begin))) {
      sep = separator(eq, true);
      out.append(query.substr(copied, raw_at(eq + 1) - copied));
      out.append("REDACTED");
      copied = raw_at(sep);
    }
    begin = sep + 1;
  }
  out.append(query.substr(copied));
  return out;
}

std::string percent_decode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    int hi = -1, lo = -1;
    if (s[i] == '%' && i + 2 < s.size() && (hi = hex_digit(s[i + 1])) >= 0 && (lo = hex_digit(s[i + 2])) >= 0) {
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else {
      out += s[i] == '+' ? ' ' : s[i];
    }
  }
  return out;
}

}  // namespace td::proxy
