// The recap summarizer's outbound call (diet/recap_summarizer.hpp)
// through the configured upstreams: one request in the provider's own shape
// (providers/summary_call.hpp) on a connection of its own (never the pool of
// an I/O thread), on a private io_context run by the calling diet thread,
// everything within the call's timeout.
#pragma once

#include <map>
#include <string>

#include "proxy/net/runtime.hpp"
#include "diet/recap_summarizer.hpp"

namespace td::proxy {

class NetRecapSummarizer final : public diet::RecapSummarizer {
 public:
  explicit NetRecapSummarizer(std::map<std::string, UpstreamTarget, std::less<>> upstreams)
      : upstreams_(std::move(upstreams)) {}
  std::optional<std::string> summarize(const diet::SummaryCall& call) const override;

  // The most of an answer read.
  static constexpr std::size_t kMaxAnswerBytes = 4 << 20;

 private:
  std::map<std::string, UpstreamTarget, std::less<>> upstreams_;
};

}  // namespace td::proxy
