// The outbound call of the recap's summarizer (docs/design.md §Policy, the
// summarizer): the diet filter asks a model for the text of a recap through
// this interface, which proxy/net implements (proxy/net/recap_summarizer_net.hpp)
// with the configured upstreams, since the diet and the filters sit below the
// network code (docs/design.md §Layout).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace td::diet {

struct SummaryCall {
  std::string provider;  // openai, anthropic, gemini: the request's shape
  std::string upstream;  // the upstream it goes to (named by provider)
  std::string model;
  std::string prompt;  // the instruction and the turns' extractive lines
  std::uint32_t max_tokens = 0;
  std::chrono::milliseconds timeout{0};  // the whole call: connect, send, answer
  // The client's own credentials (authorization, x-api-key, ...), as it sent them.
  std::vector<std::pair<std::string, std::string>> headers;
};

struct RecapSummarizer {
  virtual ~RecapSummarizer() = default;
  // The model's text, or nullopt (no connection, timeout, an error status,
  // an answer without text). Blocks the calling thread up to call.timeout:
  // call it on a diet thread, never on an I/O thread.
  virtual std::optional<std::string> summarize(const SummaryCall& call) const = 0;
};

}  // namespace td::diet
