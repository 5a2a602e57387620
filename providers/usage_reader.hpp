// Usage, model and error read from a response body as it streams past.
//
// The relay hands every byte it forwards to a tee; the tee looks only where
// usage can be and never holds more than one SSE event or the few top-level
// members it needs of a JSON body:
//   JSON body   one string-aware pass over the top level; only "usage" /
//               "usageMetadata" / "model" / "modelVersion" / "error" are
//               copied and parsed.
//   SSE stream  per event, a substring check decides whether it can carry
//               usage at all (Anthropic: by event name, so content deltas are
//               never scanned); only those events' usage members are parsed.
//     OpenAI chat   the final chunk with a non-null "usage" (include_usage)
//     Responses     response.completed / .incomplete / .failed: response.usage
//     Gemini        usageMetadata on every chunk; the last one with counts wins
//     Anthropic     message_start message.usage, then message_delta usage
//                   (cumulative; each count it carries replaces the earlier one)
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "providers/api.hpp"
#include "json/json_scan.hpp"
#include "json/sse.hpp"
#include "providers/usage.hpp"
#include "providers/usage_fields.hpp"

namespace td::providers {

// What has been learnt about a response so far.
class ResponseFacts {
 public:
  explicit ResponseFacts(Api api) : api_(api) {}
  Api api() const { return api_; }
  Usage usage() const { return normalise(api_, raw_); }
  const std::string& model() const { return model_; }
  // The top-level "error" member's JSON value, if the body carried one.
  const std::string& error_json() const { return error_; }

 protected:
  Api api_;
  RawUsage raw_;
  std::string model_;
  std::string error_;
};

// Reads SSE events handed over by an json::SseSplitter (its own, or a scrubber's).
class SseUsageReader : public ResponseFacts {
 public:
  explicit SseUsageReader(Api api) : ResponseFacts(api) {}
  // Each format's reading of an event is its FormatAdapter's usage_event.
  void on_event(const json::SseEvent& ev);
};

// Reads a JSON body fed in pieces: one object, or (Gemini streamGenerateContent
// without alt=sse) an array of response objects, of which the last usage wins.
class JsonUsageReader : public ResponseFacts {
 public:
  explicit JsonUsageReader(Api api);
  void feed(std::string_view bytes);
  void finish();

 private:
  void harvest(const json::JsonTopLevelScanner& scan);
  enum class Shape { unknown, object, array, other } shape_ = Shape::unknown;
  std::unique_ptr<json::JsonTopLevelScanner> scan_;
  // Array shape: position between elements.
  bool array_open_ = false;
};

// The response body tee: JSON or SSE by content type, corrected by the first
// bytes (Gemini answers an alt=sse request's error as plain JSON while still
// saying text/event-stream).
class ResponseUsageTee {
 public:
  ResponseUsageTee(Api api, std::string_view content_type);
  void feed(std::string_view bytes);
  void finish();

  bool is_sse() const { return mode_ == Mode::sse; }
  Usage usage() const;
  const std::string& model() const;
  const std::string& error_json() const;

 private:
  enum class Mode { undecided, json, sse, ignore };
  Mode mode_ = Mode::undecided;
  bool declared_sse_;
  std::string lead_;  // whitespace seen before the first meaningful byte
  json::SseSplitter splitter_;
  SseUsageReader sse_;
  JsonUsageReader json_;
};

}  // namespace td::providers
