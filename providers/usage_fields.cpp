#include "providers/usage_fields.hpp"

#include <rapidjson/document.h>

#include <cstdio>

#include "json/usage_object_scan.hpp"
#include "providers/format_adapter.hpp"
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
  std::snprintf(buf, sizeof buf, "prompt=%llu completion=%llu cached_read=%llu cache_write=%llu reasoning=%llu%s",
                static_cast<unsigned long long>(u.prompt), static_cast<unsigned long long>(u.completion),
                static_cast<unsigned long long>(u.cached_read), static_cast<unsigned long long>(u.cache_write),
                static_cast<unsigned long long>(u.reasoning), u.present ? "" : " (absent)");
  return buf;
}

namespace {

// A RapidJSON object as the format's adapter reads it.
struct DocumentCounts final : UsageCounts {
  explicit DocumentCounts(const Value& d) : doc(d) {}
  const Value& doc;
  std::optional<std::int64_t> count(std::string_view key) const override {
    return providers::count(doc, std::string(key).c_str());
  }
  std::optional<std::int64_t> nested_count(std::string_view parent, std::string_view key) const override {
    return providers::nested_count(doc, std::string(parent).c_str(), std::string(key).c_str());
  }
};

// The scan of a usage object's bytes, the same way.
struct ScanCounts final : UsageCounts {
  explicit ScanCounts(const json::UsageObjectScan& s) : scan(s) {}
  const json::UsageObjectScan& scan;
  std::optional<std::int64_t> count(std::string_view key) const override { return scan.count(key); }
  std::optional<std::int64_t> nested_count(std::string_view parent, std::string_view key) const override {
    return scan.nested_count(parent, key);
  }
};

}  // namespace

std::optional<RawUsage> read_usage_object(Api api, std::string_view json) {
  // The common case without a document (see usage_object_scan.hpp).
  if (json::UsageObjectScan scan(json); scan.ok()) {
    RawUsage r = adapter(api).usage_counts(ScanCounts(scan));
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
  rapidjson::GenericDocument<rapidjson::UTF8<>, rapidjson::MemoryPoolAllocator<>, rapidjson::MemoryPoolAllocator<>> doc(
      &values, sizeof stack_buffer, &stack);
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError() || !doc.IsObject()) return std::nullopt;
  RawUsage r = adapter(api).usage_counts(DocumentCounts(doc));
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
  if (!r.any()) return Usage{};
  Usage u = adapter(api).normalise_usage(r);
  u.present = true;
  return u;
}

bool stream_usage_on_request(Api api) { return adapter(api).stream_usage_on_request; }

}  // namespace td::providers
