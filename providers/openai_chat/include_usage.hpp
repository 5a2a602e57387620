// Usage for OpenAI chat streams whose client did not ask for it (docs/design.md
// §Principles (1), its one exception).
//
// Without stream_options.include_usage an OpenAI chat stream carries no token
// counts at all. So on the way up tokendiet adds the option, and on the way
// down it removes exactly what that option adds:
//   - the `"usage":null` member every chunk then carries (wherever it sits in
//     the chunk: recordings show it both before "choices" and after it), and
//   - the final usage-only chunk (`"choices":[]` plus the usage object), with
//     its blank-line separator,
// and reads the counts from that chunk. Nothing is re-serialised: both edits
// are byte splices, so the client receives the bytes it would have received
// without us. The profile flag `stream_usage: false` turns this off.
#pragma once

#include <string>
#include <string_view>

#include "json/sse.hpp"
#include "providers/usage_reader.hpp"

namespace td::providers {

enum class IncludeUsage {
  not_streaming,  // no "stream": true: nothing to do
  client_asked,   // stream_options.include_usage is already true: relay as is
  injected,       // body rewritten; the response must be scrubbed
  unsupported,    // not a JSON object, or a stream_options we cannot extend
};

struct IncludeUsageSplice {
  IncludeUsage outcome = IncludeUsage::unsupported;
  std::string body;  // the rewritten body when outcome == injected
};

// Request side: adds `"stream_options":{"include_usage":true}` to an OpenAI
// chat request body that streams without it. An existing stream_options object
// gets `"include_usage":true` added (or its `false` flipped: the client gets
// no usage chunk either way); every other byte is kept as it was.
IncludeUsageSplice inject_include_usage(std::string_view body);

// Response side: relays an injected stream minus the injected parts, and
// reads the usage out of them. Holds back at most the one event in progress.
// A body that is not SSE (an error answered as JSON) passes through untouched.
class OpenAiUsageScrubber {
 public:
  OpenAiUsageScrubber() : reader_(Api::openai_chat), json_(Api::openai_chat) {}

  // Appends to `out` the bytes the client should get for `in`.
  void feed(std::string_view in, std::string& out);
  // End of the upstream body: releases an unterminated last event.
  void finish(std::string& out);

  // What the stream (or a JSON error body) said.
  const ResponseFacts& facts() const {
    return mode_ == Mode::passthrough ? static_cast<const ResponseFacts&>(json_) : reader_;
  }
  std::size_t held_back() const { return splitter_.pending(); }
  // What was removed, for metrics and tests.
  int removed_nulls() const { return removed_nulls_; }
  bool removed_usage_chunk() const { return removed_usage_chunk_; }

 private:
  void on_event(const json::SseEvent& ev, std::string& out);

  enum class Mode { undecided, sse, passthrough } mode_ = Mode::undecided;
  json::SseSplitter splitter_{1u << 20};
  SseUsageReader reader_;
  JsonUsageReader json_;  // a body that turned out not to be SSE
  bool last_dropped_ = false;
  int removed_nulls_ = 0;
  bool removed_usage_chunk_ = false;
};

}  // namespace td::providers
