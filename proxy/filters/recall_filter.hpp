// The recall filter (docs/design.md §Recall): while a request carries
// notices naming what its cuts hid (or tombstones) and the tokendiet_recall
// tool (the RecallOffer published by the recall offer filter), the proxy
// answers the model's recall calls itself.
//
//   response_head_filter      a 2xx answer to such a request: its rounds will
//                             be merged (providers/recall_merge.hpp); the
//                             merged body's length differs, so Content-Length goes.
//   response_body_filter      each round's bytes through the merge: the recall
//                             calls (and the client's calls beside them) are
//                             held back; at a round's end that called the tool,
//                             ctx.continuation asks the core for another round.
//   continuation_filter       the round's assistant turn and a tool result per
//                             call (the hidden or archived text, or its asked lines, or
//                             "unknown id") appended to the request body; at
//                             most kMaxRounds continuations per request. The
//                             lines shown are remembered for the session.
//
// Registered before the usage filter, which then reads the merged response:
// its usage is the sum over the rounds.
#pragma once

#include "proxy/filters/runway_account.hpp"
#include "proxy/phases/filter.hpp"

namespace td::proxy {

class RecallFilter final : public Filter {
 public:
  static constexpr unsigned kMaxRounds = 3;  // recall rounds per request (docs/design.md §Recall, bounds)

  RecallFilter() = default;  // remembers nothing between requests
  // `policy`: where the lines a round answered are remembered for the
  // session's later requests (docs/design.md §Recall, "Recalled lines stay").
  explicit RecallFilter(PolicyState policy) : policy_(std::move(policy)) {}

  std::string_view name() const override { return "recall"; }
  void response_head_filter(RequestContext& ctx, HeaderMap& headers) override;
  void response_body_filter(RequestContext& ctx, std::string& chunk, bool end_of_stream) override;
  bool continuation_filter(RequestContext& ctx, std::string& body) override;

 private:
  PolicyState policy_{};
};

}  // namespace td::proxy
