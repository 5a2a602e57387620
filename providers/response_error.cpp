#include "providers/response_error.hpp"

#include <rapidjson/document.h>

#include <algorithm>
#include <cctype>

#include "json/json_scan.hpp"
#include "providers/rate_limits.hpp"
#include "pruning/json_nesting.hpp"

namespace td::providers {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool has(const std::string& hay, std::string_view needle) { return hay.find(needle) != std::string::npos; }

std::string str_member(const rapidjson::Value& obj, const char* key) {
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd()) return {};
  if (it->value.IsString()) return {it->value.GetString(), it->value.GetStringLength()};
  if (it->value.IsInt64()) return std::to_string(it->value.GetInt64());
  return {};
}

std::optional<std::chrono::milliseconds> to_ms(std::string_view go) {
  auto d = parse_go_duration(go);
  if (!d || d->count() < 0) return std::nullopt;
  return std::chrono::duration_cast<std::chrono::milliseconds>(*d);
}

// Gemini: {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "31s"}.
std::optional<std::chrono::milliseconds> gemini_retry_delay(const rapidjson::Value& err) {
  auto it = err.FindMember("details");
  if (it == err.MemberEnd() || !it->value.IsArray()) return std::nullopt;
  for (const auto& d : it->value.GetArray()) {
    if (!d.IsObject()) continue;
    std::string type = str_member(d, "@type");
    if (!type.ends_with("RetryInfo")) continue;
    return to_ms(str_member(d, "retryDelay"));
  }
  return std::nullopt;
}

// OpenAI: "... Please try again in 1.634s. Visit ..." / "in 20ms." / "in 6m0s."
std::optional<std::chrono::milliseconds> message_retry_delay(std::string_view msg) {
  constexpr std::string_view kMark = "try again in ";
  auto p = msg.find(kMark);
  if (p == std::string_view::npos) return std::nullopt;
  std::string_view rest = msg.substr(p + kMark.size());
  std::string_view token = rest.substr(0, rest.find_first_of(" ,"));
  while (!token.empty() && token.back() == '.') token.remove_suffix(1);
  return to_ms(token);
}

}  // namespace

ResponseError classify_error(int status, std::string_view error_json) {
  ResponseError e;
  e.is_error = status >= 400 || !error_json.empty();
  if (!e.is_error) return e;

  std::string code, type, gstatus, message;
  if (!error_json.empty() && pruning::json_nesting_within(error_json)) {
    rapidjson::Document doc;
    doc.Parse(error_json.data(), error_json.size());
    if (!doc.HasParseError()) {
      if (doc.IsObject()) {
        code = str_member(doc, "code");       // OpenAI string code; Gemini numeric
        type = str_member(doc, "type");       // OpenAI / Anthropic
        gstatus = str_member(doc, "status");  // Gemini
        message = str_member(doc, "message");
        e.retry_delay = gemini_retry_delay(doc);
      } else if (doc.IsString()) {
        message.assign(doc.GetString(), doc.GetStringLength());
      }
    }
  }
  // The most specific name the provider gave the error.
  bool numeric_code = !code.empty() && std::all_of(code.begin(), code.end(), ::isdigit);
  e.code = !gstatus.empty() ? gstatus : (!numeric_code && !code.empty()) ? code : type;
  e.message = message.substr(0, 300);
  if (!e.retry_delay) e.retry_delay = message_retry_delay(message);

  std::string msg = lower(message);
  std::string lcode = lower(code), ltype = lower(type);
  e.context_length_exceeded =
      lcode == "context_length_exceeded" || ltype == "context_length_exceeded" || has(msg, "maximum context length") ||
      has(msg, "context_length_exceeded") || has(msg, "prompt is too long") || has(msg, "exceed context limit") ||
      (has(msg, "context window") && has(msg, "exceed")) ||
      (has(msg, "token count") && (has(msg, "exceeds the maximum") || has(msg, "only supports up to")));
  e.rate_limited =
      status == 429 || ltype == "rate_limit_error" || lcode == "rate_limit_exceeded" || gstatus == "RESOURCE_EXHAUSTED";
  e.overloaded = status == 529 || ltype == "overloaded_error" || (status == 503 && gstatus == "UNAVAILABLE");
  return e;
}

ResponseError classify_error_body(int status, std::string_view body) {
  auto v = json::top_level_value(body, "error");
  if (v.empty()) {
    // Gemini's non-SSE stream answers errors as an array: [{"error": {...}}].
    std::size_t i = body.find_first_not_of(" \t\r\n");
    if (i != std::string_view::npos && body[i] == '[') {
      std::size_t j = body.find('{', i);
      std::size_t k = body.find_last_of('}');
      if (j != std::string_view::npos && k != std::string_view::npos && k > j)
        v = json::top_level_value(body.substr(j, k - j + 1), "error");
    }
  }
  return classify_error(status, v);
}

}  // namespace td::providers
