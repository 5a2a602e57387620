#include "providers/response_error.hpp"

#include <rapidjson/document.h>

#include <algorithm>
#include <cctype>

#include "providers/json_scan.hpp"

namespace td::providers {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool has(const std::string& hay, std::string_view needle) {
  return hay.find(needle) != std::string::npos;
}

std::string str_member(const rapidjson::Value& obj, const char* key) {
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd()) return {};
  if (it->value.IsString()) return {it->value.GetString(), it->value.GetStringLength()};
  if (it->value.IsInt64()) return std::to_string(it->value.GetInt64());
  return {};
}

}  // namespace

ResponseError classify_error(int status, std::string_view error_json) {
  ResponseError e;
  e.is_error = status >= 400 || !error_json.empty();
  if (!e.is_error) return e;

  std::string code, type, gstatus, message;
  if (!error_json.empty()) {
    rapidjson::Document doc;
    doc.Parse(error_json.data(), error_json.size());
    if (!doc.HasParseError()) {
      if (doc.IsObject()) {
        code = str_member(doc, "code");      // OpenAI string code; Gemini numeric
        type = str_member(doc, "type");      // OpenAI / Anthropic
        gstatus = str_member(doc, "status");  // Gemini
        message = str_member(doc, "message");
      } else if (doc.IsString()) {
        message.assign(doc.GetString(), doc.GetStringLength());
      }
    }
  }
  // The most specific name the provider gave the error.
  bool numeric_code = !code.empty() && std::all_of(code.begin(), code.end(), ::isdigit);
  e.code = !gstatus.empty() ? gstatus : (!numeric_code && !code.empty()) ? code : type;
  e.message = message.substr(0, 300);

  std::string msg = lower(message);
  std::string lcode = lower(code), ltype = lower(type);
  e.context_length_exceeded =
      lcode == "context_length_exceeded" || ltype == "context_length_exceeded" ||
      has(msg, "maximum context length") || has(msg, "context_length_exceeded") ||
      has(msg, "prompt is too long") || has(msg, "exceed context limit") ||
      (has(msg, "context window") && has(msg, "exceed")) ||
      (has(msg, "token count") &&
       (has(msg, "exceeds the maximum") || has(msg, "only supports up to")));
  e.rate_limited = status == 429 || ltype == "rate_limit_error" || lcode == "rate_limit_exceeded" ||
                   gstatus == "RESOURCE_EXHAUSTED";
  e.overloaded = status == 529 || ltype == "overloaded_error" ||
                 (status == 503 && gstatus == "UNAVAILABLE");
  return e;
}

ResponseError classify_error_body(int status, std::string_view body) {
  auto v = top_level_value(body, "error");
  if (v.empty()) {
    // Gemini's non-SSE stream answers errors as an array: [{"error": {...}}].
    std::size_t i = body.find_first_not_of(" \t\r\n");
    if (i != std::string_view::npos && body[i] == '[') {
      std::size_t j = body.find('{', i);
      std::size_t k = body.find_last_of('}');
      if (j != std::string_view::npos && k != std::string_view::npos && k > j)
        v = top_level_value(body.substr(j, k - j + 1), "error");
    }
  }
  return classify_error(status, v);
}

}  // namespace td::providers
