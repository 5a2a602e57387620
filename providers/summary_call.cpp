#include "providers/summary_call.hpp"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "pruning/json_nesting.hpp"

namespace td::providers {

namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void key(Writer& w, std::string_view k) { w.Key(k.data(), static_cast<rapidjson::SizeType>(k.size())); }
void str(Writer& w, std::string_view s) { w.String(s.data(), static_cast<rapidjson::SizeType>(s.size())); }

// Appends the string members named `field` of the objects in `array` (or of
// `array[i][nested]`), for the answer's text parts.
void append_texts(const rapidjson::Value& array, const char* field, std::string& out) {
  if (!array.IsArray()) return;
  for (const auto& part : array.GetArray())
    if (part.IsObject() && part.HasMember(field) && part[field].IsString()) {
      // Gemini marks its thoughts; they are not the answer.
      if (part.HasMember("thought") && part["thought"].IsBool() && part["thought"].GetBool()) continue;
      out.append(part[field].GetString(), part[field].GetStringLength());
    }
}

std::string trimmed(std::string s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

}  // namespace

std::string summary_request_path(std::string_view provider, std::string_view model) {
  if (provider == "openai") return "/v1/chat/completions";
  if (provider == "anthropic") return "/v1/messages";
  if (provider == "gemini") return "/v1beta/models/" + std::string(model) + ":generateContent";
  return {};
}

std::string summary_request_body(std::string_view provider, std::string_view model, std::string_view prompt,
                                 std::uint32_t max_tokens) {
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  if (provider == "gemini") {
    key(w, "contents");
    w.StartArray();
    w.StartObject();
    key(w, "role");
    str(w, "user");
    key(w, "parts");
    w.StartArray();
    w.StartObject();
    key(w, "text");
    str(w, prompt);
    w.EndObject();
    w.EndArray();
    w.EndObject();
    w.EndArray();
    key(w, "generationConfig");
    w.StartObject();
    key(w, "maxOutputTokens");
    w.Uint(max_tokens);
    w.EndObject();
  } else {
    key(w, "model");
    str(w, model);
    key(w, provider == "openai" ? "max_completion_tokens" : "max_tokens");
    w.Uint(max_tokens);
    key(w, "messages");
    w.StartArray();
    w.StartObject();
    key(w, "role");
    str(w, "user");
    key(w, "content");
    str(w, prompt);
    w.EndObject();
    w.EndArray();
    key(w, "stream");
    w.Bool(false);
  }
  w.EndObject();
  return {buf.GetString(), buf.GetSize()};
}

std::optional<std::string> summary_response_text(std::string_view provider, std::string_view body) {
  if (!pruning::json_nesting_within(body)) return std::nullopt;  // as every reader of upstream JSON
  rapidjson::Document d;
  d.Parse(body.data(), body.size());
  if (d.HasParseError() || !d.IsObject()) return std::nullopt;
  std::string out;
  if (provider == "openai") {
    if (d.HasMember("choices") && d["choices"].IsArray() && !d["choices"].Empty()) {
      const auto& c = d["choices"][0];
      if (c.IsObject() && c.HasMember("message") && c["message"].IsObject() && c["message"].HasMember("content") &&
          c["message"]["content"].IsString())
        out.assign(c["message"]["content"].GetString(), c["message"]["content"].GetStringLength());
    }
  } else if (provider == "anthropic") {
    if (d.HasMember("content")) append_texts(d["content"], "text", out);
  } else if (provider == "gemini") {
    if (d.HasMember("candidates") && d["candidates"].IsArray() && !d["candidates"].Empty()) {
      const auto& c = d["candidates"][0];
      if (c.IsObject() && c.HasMember("content") && c["content"].IsObject() && c["content"].HasMember("parts"))
        append_texts(c["content"]["parts"], "text", out);
    }
  }
  out = trimmed(std::move(out));
  if (out.empty()) return std::nullopt;
  return out;
}

}  // namespace td::providers
