#include "providers/usage_reader.hpp"

#include <rapidjson/document.h>

#include <cstring>

#include "providers/format_adapter.hpp"
#include "providers/usage_event.hpp"

namespace td::providers {

namespace usage_event {

bool contains(std::string_view hay, std::string_view needle) {
  return ::memmem(hay.data(), hay.size(), needle.data(), needle.size()) != nullptr;
}

std::string json_string(std::string_view literal) {
  if (literal.size() < 2 || literal.front() != '"') return {};
  if (literal.find('\\') == std::string_view::npos) return std::string(literal.substr(1, literal.size() - 2));
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

}  // namespace usage_event

namespace {

using usage_event::json_string;
using usage_event::kMaxCapture;

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

}  // namespace

// ---------------------------------------------------------------- SSE

void SseUsageReader::on_event(const json::SseEvent& ev) {
  if (ev.continuation || ev.overflow || !ev.has_data) return;
  std::string_view d = ev.data;
  if (d.empty() || d == "[DONE]") return;
  adapter(api_).usage_event(ev.name, d, UsageSeen{raw_, model_, error_});
}

// ---------------------------------------------------------------- JSON

JsonUsageReader::JsonUsageReader(Api api) : ResponseFacts(api) {}

namespace {
std::unique_ptr<json::JsonTopLevelScanner> new_scanner() {
  return std::make_unique<json::JsonTopLevelScanner>(
      std::initializer_list<std::string_view>{"usage", "usageMetadata", "model", "modelVersion", "error"}, false,
      kMaxCapture);
}
}  // namespace

void JsonUsageReader::harvest(const json::JsonTopLevelScanner& scan) {
  const std::string_view usage_key = adapter(api_).usage_member;
  const std::string_view model_key = adapter(api_).model_member;
  if (const auto* u = scan.find(usage_key); u && !u->truncated && !json::is_json_null(u->value))
    if (auto r = read_usage_object(api_, u->value)) raw_ = *r;
  if (const auto* m = scan.find(model_key); m && !m->truncated && model_.empty()) model_ = json_string(m->value);
  if (const auto* e = scan.find("error"); e && !e->truncated && !json::is_json_null(e->value)) error_ = e->value;
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
          if (i < bytes.size() && bytes[i] == '{')
            scan_ = new_scanner();
          else if (i < bytes.size())
            shape_ = Shape::other;  // ']' : done
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
    : declared_sse_(content_type.find("event-stream") != std::string_view::npos), sse_(api), json_(api) {}

void ResponseUsageTee::feed(std::string_view bytes) {
  if (mode_ == Mode::undecided) {
    std::size_t i = 0;
    while (i < bytes.size() && is_blank(bytes[i])) ++i;
    if (i == bytes.size()) {
      lead_.append(bytes);
      return;
    }
    char c = bytes[i];
    if (c == '{' || c == '[')
      mode_ = Mode::json;
    else if (declared_sse_)
      mode_ = Mode::sse;
    else
      mode_ = Mode::ignore;
    if (!lead_.empty()) {
      std::string lead = std::move(lead_);
      lead_.clear();
      feed(lead);
    }
  }
  switch (mode_) {
    case Mode::json:
      json_.feed(bytes);
      break;
    case Mode::sse:
      splitter_.feed(bytes, [this](const json::SseEvent& ev) { sse_.on_event(ev); });
      break;
    default:
      break;
  }
}

void ResponseUsageTee::finish() {
  if (mode_ == Mode::json) json_.finish();
  if (mode_ == Mode::sse) splitter_.finish([this](const json::SseEvent& ev) { sse_.on_event(ev); });
}

Usage ResponseUsageTee::usage() const { return mode_ == Mode::sse ? sse_.usage() : json_.usage(); }
const std::string& ResponseUsageTee::model() const { return mode_ == Mode::sse ? sse_.model() : json_.model(); }
const std::string& ResponseUsageTee::error_json() const {
  return mode_ == Mode::sse ? sse_.error_json() : json_.error_json();
}

}  // namespace td::providers
