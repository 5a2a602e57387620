#include "providers/usage_reader.hpp"

#include <rapidjson/document.h>

#include <cstring>

namespace td::providers {
namespace {

constexpr std::size_t kMaxCapture = 256 * 1024;  // a usage/error member is tiny

bool contains(std::string_view hay, std::string_view needle) {
  return ::memmem(hay.data(), hay.size(), needle.data(), needle.size()) != nullptr;
}

// A JSON string literal's text, escapes decoded; "" if not a string.
std::string json_string(std::string_view literal) {
  if (literal.size() < 2 || literal.front() != '"') return {};
  if (literal.find('\\') == std::string_view::npos)
    return std::string(literal.substr(1, literal.size() - 2));
  rapidjson::Document d;
  d.Parse(literal.data(), literal.size());
  if (d.HasParseError() || !d.IsString()) return {};
  return std::string(d.GetString(), d.GetStringLength());
}

std::string_view member(const std::vector<json::JsonMemberView>& ms, std::string_view key) {
  std::string_view v;
  for (const auto& m : ms)
    if (m.key == key) v = m.value;
  return v;
}

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

}  // namespace

// ---------------------------------------------------------------- SSE

void SseUsageReader::on_event(const json::SseEvent& ev) {
  if (ev.continuation || ev.overflow || !ev.has_data) return;
  std::string_view d = ev.data;
  if (d.empty() || d == "[DONE]") return;
  switch (api_) {
    case Api::openai_chat: on_openai_chat(d); break;
    case Api::openai_responses: on_responses(d); break;
    case Api::gemini: on_gemini(d); break;
    case Api::anthropic: on_anthropic(ev.name, d); break;
  }
}

void SseUsageReader::on_openai_chat(std::string_view d) {
  bool want_model = model_.empty() && contains(d, "\"model\"");
  if (!want_model && !contains(d, "\"usage\"") && !contains(d, "\"error\"")) return;
  auto ms = json::top_level_members(d);
  for (const auto& m : ms) {
    if (m.key == "usage" && !json::is_json_null(m.value)) {
      if (auto r = read_usage_object(api_, m.value)) raw_ = *r;
    } else if (m.key == "model" && want_model) {
      model_ = json_string(m.value);
    } else if (m.key == "error") {
      error_.assign(m.value.substr(0, kMaxCapture));
    }
  }
}

void SseUsageReader::on_responses(std::string_view d) {
  bool want_model = model_.empty() && contains(d, "\"model\"");
  if (!want_model && !contains(d, "\"usage\"") && !contains(d, "\"error\"")) return;
  auto ms = json::top_level_members(d);
  if (auto e = member(ms, "error"); !e.empty() && !json::is_json_null(e)) error_.assign(e.substr(0, kMaxCapture));
  std::string_view resp = member(ms, "response");
  if (resp.empty()) return;
  auto rs = json::top_level_members(resp);
  if (auto u = member(rs, "usage"); !u.empty() && !json::is_json_null(u))
    if (auto r = read_usage_object(api_, u)) raw_ = *r;
  if (auto m = member(rs, "model"); !m.empty()) model_ = json_string(m);
  if (auto e = member(rs, "error"); !e.empty() && !json::is_json_null(e)) error_.assign(e.substr(0, kMaxCapture));
}

void SseUsageReader::on_gemini(std::string_view d) {
  bool want_model = model_.empty() && contains(d, "\"modelVersion\"");
  if (!want_model && !contains(d, "\"usageMetadata\"") && !contains(d, "\"error\"")) return;
  auto ms = json::top_level_members(d);
  for (const auto& m : ms) {
    if (m.key == "usageMetadata") {
      // Every chunk repeats the running totals; a chunk with no counts at all
      // (Vertex's first {"trafficType": ...}) does not erase earlier ones.
      if (auto r = read_usage_object(api_, m.value)) raw_ = *r;
    } else if (m.key == "modelVersion" && want_model) {
      model_ = json_string(m.value);
    } else if (m.key == "error") {
      error_.assign(m.value.substr(0, kMaxCapture));
    }
  }
}

void SseUsageReader::on_anthropic(std::string_view name, std::string_view d) {
  // The event name says what the data is; content deltas (the bulk of the
  // stream) are skipped without looking at their data.
  if (name.empty()) {
    if (contains(d, "message_start")) name = "message_start";
    else if (contains(d, "message_delta")) name = "message_delta";
    else if (contains(d, "\"error\"")) name = "error";
    else return;
  }
  if (name == "message_start") {
    auto ms = json::top_level_members(d);
    std::string_view msg = member(ms, "message");
    if (msg.empty()) return;
    auto mm = json::top_level_members(msg);
    if (auto u = member(mm, "usage"); !u.empty())
      if (auto r = read_usage_object(api_, u)) raw_ = *r;
    if (auto m = member(mm, "model"); !m.empty()) model_ = json_string(m);
  } else if (name == "message_delta") {
    std::string_view u = json::top_level_value(d, "usage");
    if (u.empty()) return;
    if (auto r = read_usage_object(api_, u)) merge_into(raw_, *r);
  } else if (name == "error") {
    if (auto e = json::top_level_value(d, "error"); !e.empty()) error_.assign(e.substr(0, kMaxCapture));
  }
}

// ---------------------------------------------------------------- JSON

JsonUsageReader::JsonUsageReader(Api api) : ResponseFacts(api) {}

namespace {
std::unique_ptr<json::JsonTopLevelScanner> new_scanner() {
  return std::make_unique<json::JsonTopLevelScanner>(
      std::initializer_list<std::string_view>{"usage", "usageMetadata", "model", "modelVersion",
                                              "error"},
      false, kMaxCapture);
}
}  // namespace

void JsonUsageReader::harvest(const json::JsonTopLevelScanner& scan) {
  std::string_view usage_key = api_ == Api::gemini ? "usageMetadata" : "usage";
  std::string_view model_key = api_ == Api::gemini ? "modelVersion" : "model";
  if (const auto* u = scan.find(usage_key); u && !u->truncated && !json::is_json_null(u->value))
    if (auto r = read_usage_object(api_, u->value)) raw_ = *r;
  if (const auto* m = scan.find(model_key); m && !m->truncated && model_.empty())
    model_ = json_string(m->value);
  if (const auto* e = scan.find("error"); e && !e->truncated && !json::is_json_null(e->value))
    error_ = e->value;
}

void JsonUsageReader::feed(std::string_view bytes) {
  while (!bytes.empty()) {
    switch (shape_) {
      case Shape::unknown: {
        std::size_t i = 0;
        while (i < bytes.size() && is_blank(bytes[i])) ++i;
        if (i == bytes.size()) return;
        bytes.remove_prefix(i);
        if (bytes[0] == '{') {
          shape_ = Shape::object;
          scan_ = new_scanner();
        } else if (bytes[0] == '[') {
          shape_ = Shape::array;
          bytes.remove_prefix(1);
        } else {
          shape_ = Shape::other;
        }
        break;
      }
      case Shape::object:
        scan_->feed(bytes);
        if (scan_->complete()) harvest(*scan_);
        return;
      case Shape::array:
        if (scan_) {
          // Inside an element: the scanner stops at its closing brace.
          bytes.remove_prefix(scan_->feed(bytes));
          if (scan_->complete() || scan_->failed()) {
            if (scan_->complete()) harvest(*scan_);
            scan_.reset();
          }
        } else {
          // Between elements: skip separators up to the next object.
          std::size_t i = 0;
          while (i < bytes.size() && bytes[i] != '{' && bytes[i] != ']') ++i;
          if (i < bytes.size() && bytes[i] == '{') scan_ = new_scanner();
          else if (i < bytes.size()) shape_ = Shape::other;  // ']' : done
          bytes.remove_prefix(i);
        }
        break;
      case Shape::other:
        return;
    }
  }
}

void JsonUsageReader::finish() {
  // A complete body was harvested as it completed; a truncated one is
  // harvested here, for the members it did finish.
  if (shape_ == Shape::object && scan_ && !scan_->complete()) harvest(*scan_);
  scan_.reset();
}

// ---------------------------------------------------------------- tee

ResponseUsageTee::ResponseUsageTee(Api api, std::string_view content_type)
    : declared_sse_(content_type.find("event-stream") != std::string_view::npos),
      sse_(api),
      json_(api) {}

void ResponseUsageTee::feed(std::string_view bytes) {
  if (mode_ == Mode::undecided) {
    std::size_t i = 0;
    while (i < bytes.size() && is_blank(bytes[i])) ++i;
    if (i == bytes.size()) {
      lead_.append(bytes);
      return;
    }
    char c = bytes[i];
    if (c == '{' || c == '[') mode_ = Mode::json;
    else if (declared_sse_) mode_ = Mode::sse;
    else mode_ = Mode::ignore;
    if (!lead_.empty()) {
      std::string lead = std::move(lead_);
      lead_.clear();
      feed(lead);
    }
  }
  switch (mode_) {
    case Mode::json: json_.feed(bytes); break;
    case Mode::sse: splitter_.feed(bytes, [this](const json::SseEvent& ev) { sse_.on_event(ev); }); break;
    default: break;
  }
}

void ResponseUsageTee::finish() {
  if (mode_ == Mode::json) json_.finish();
  if (mode_ == Mode::sse) splitter_.finish([this](const json::SseEvent& ev) { sse_.on_event(ev); });
}

Usage ResponseUsageTee::usage() const { return mode_ == Mode::sse ? sse_.usage() : json_.usage(); }
const std::string& ResponseUsageTee::model() const {
  return mode_ == Mode::sse ? sse_.model() : json_.model();
}
const std::string& ResponseUsageTee::error_json() const {
  return mode_ == Mode::sse ? sse_.error_json() : json_.error_json();
}

}  // namespace td::providers
