#include "providers/usage_fields.hpp"

#include <rapidjson/document.h>

#include <cstdio>

#include "json/usage_object_scan.hpp"
#include "pruning/json_nesting.hpp"

namespace td::providers {
namespace {

using Value = rapidjson::Value;

std::optional<std::int64_t> count(const Value& obj, const char* key) {
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd()) return std::nullopt;
  const Value& v = it->value;
  if (v.IsInt64()) return v.GetInt64();
  if (v.IsUint64()) return static_cast<std::int64_t>(v.GetUint64());
  if (v.IsDouble()) return static_cast<std::int64_t>(v.GetDouble());
  return std::nullopt;  // null or wrong type: not reported
}

std::optional<std::int64_t> nested_count(const Value& obj, const char* parent, const char* key) {
  auto it = obj.FindMember(parent);
  if (it == obj.MemberEnd() || !it->value.IsObject()) return std::nullopt;
  return count(it->value, key);
}

}  // namespace

std::string to_string(const Usage& u) {
  char buf[192];
  std::snprintf(buf, sizeof buf,
                "prompt=%llu completion=%llu cached_read=%llu cache_write=%llu reasoning=%llu%s",
                static_cast<unsigned long long>(u.prompt), static_cast<unsigned long long>(u.completion),
                static_cast<unsigned long long>(u.cached_read), static_cast<unsigned long long>(u.cache_write),
                static_cast<unsigned long long>(u.reasoning), u.present ? "" : " (absent)");
  return buf;
}

namespace {

// The counts each API names, read from any source with count(key) and
// nested_count(parent, key).
template <class Source>
RawUsage map_counts(Api api, const Source& src) {
  RawUsage r;
  switch (api) {
    case Api::openai_chat:
      r.input = src.count("prompt_tokens");
      r.output = src.count("completion_tokens");
      r.cache_read = src.nested_count("prompt_tokens_details", "cached_tokens");
      r.reasoning = src.nested_count("completion_tokens_details", "reasoning_tokens");
      // Some OpenAI-compatible servers answer chat requests in the Responses
      // spelling; accept it rather than report nothing.
      if (!r.input && !r.output) {
        r.input = src.count("input_tokens");
        r.output = src.count("output_tokens");
      }
      break;
    case Api::openai_responses:
      r.input = src.count("input_tokens");
      r.output = src.count("output_tokens");
      r.cache_read = src.nested_count("input_tokens_details", "cached_tokens");
      r.reasoning = src.nested_count("output_tokens_details", "reasoning_tokens");
      break;
    case Api::gemini:
      r.input = src.count("promptTokenCount");
      r.output = src.count("candidatesTokenCount");
      r.cache_read = src.count("cachedContentTokenCount");
      r.reasoning = src.count("thoughtsTokenCount");
      r.tool_prompt = src.count("toolUsePromptTokenCount");
      break;
    case Api::anthropic:
      r.input = src.count("input_tokens");
      r.output = src.count("output_tokens");
      r.cache_read = src.count("cache_read_input_tokens");
      r.cache_write = src.count("cache_creation_input_tokens");
      break;
  }
  return r;
}

// A RapidJSON document as a Source.
struct DocumentSource {
  const Value& doc;
  std::optional<std::int64_t> count(const char* key) const { return providers::count(doc, key); }
  std::optional<std::int64_t> nested_count(const char* parent, const char* key) const {
    return providers::nested_count(doc, parent, key);
  }
};

}  // namespace

std::optional<RawUsage> read_usage_object(Api api, std::string_view json) {
  // The common case without a document (see usage_object_scan.hpp).
  if (json::UsageObjectScan scan(json); scan.ok()) {
    RawUsage r = map_counts(api, scan);
    if (!r.any()) return std::nullopt;
    return r;
  }
  // What the scan declines: RapidJSON decides, if it can do so without
  // recursing deeper than any usage object nests.
  if (!pruning::json_nesting_within(json)) return std::nullopt;
  // A usage object is a few hundred bytes: parse it in stack memory, no malloc (the pools fall back to the
  // heap for a larger one).
  char value_buffer[2048], stack_buffer[512];
  rapidjson::MemoryPoolAllocator<> values(value_buffer, sizeof value_buffer);
  rapidjson::MemoryPoolAllocator<> stack(stack_buffer, sizeof stack_buffer);
  rapidjson::GenericDocument<rapidjson::UTF8<>, rapidjson::MemoryPoolAllocator<>, rapidjson::MemoryPoolAllocator<>>
      doc(&values, sizeof stack_buffer, &stack);
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError() || !doc.IsObject()) return std::nullopt;
  RawUsage r = map_counts(api, DocumentSource{doc});
  if (!r.any()) return std::nullopt;
  return r;
}

void merge_into(RawUsage& base, const RawUsage& update) {
  if (update.input) base.input = update.input;
  if (update.output) base.output = update.output;
  if (update.cache_read) base.cache_read = update.cache_read;
  if (update.cache_write) base.cache_write = update.cache_write;
  if (update.reasoning) base.reasoning = update.reasoning;
  if (update.tool_prompt) base.tool_prompt = update.tool_prompt;
}

Usage normalise(Api api, const RawUsage& r) {
  Usage u;
  u.present = r.any();
  if (!u.present) return u;
  auto v = [](const std::optional<std::int64_t>& o) { return o.value_or(0); };
  // Sums are taken over the provider's signed counts; a negative result (a
  // broken upstream) is read as 0.
  auto n = [](std::int64_t x) { return static_cast<std::uint64_t>(x < 0 ? 0 : x); };
  switch (api) {
    case Api::openai_chat:
    case Api::openai_responses:
      u.prompt = n(v(r.input));
      u.completion = n(v(r.output));
      u.cached_read = n(v(r.cache_read));
      u.reasoning = n(v(r.reasoning));
      break;
    case Api::gemini:
      u.prompt = n(v(r.input) + v(r.tool_prompt));
      u.completion = n(v(r.output) + v(r.reasoning));
      u.cached_read = n(v(r.cache_read));
      u.reasoning = n(v(r.reasoning));
      break;
    case Api::anthropic:
      u.prompt = n(v(r.input) + v(r.cache_read) + v(r.cache_write));
      u.completion = n(v(r.output));
      u.cached_read = n(v(r.cache_read));
      u.cache_write = n(v(r.cache_write));
      break;
  }
  return u;
}

}  // namespace td::providers
