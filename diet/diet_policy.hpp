// The diet's decide and prune steps when the proxy's state is at hand
// (diet/diet.hpp): the policy (pruning::decide) with the runway and
// the session's memory, and the pipeline run at each level the policy asks
// about. The first level runs on the request as parsed; a harder one on a
// second parse of the same bytes (from the parsed-message memo), so the
// request the policy leaves at the diet's level costs no copy.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "providers/request.hpp"
#include "providers/route.hpp"
#include "diet/diet_caches.hpp"
#include "pruning/decision.hpp"
#include "pruning/pipeline.hpp"

namespace td::diet {

// What the policy is asked about, once the request's model and profile are known.
struct PolicyQuery {
  std::string_view model;
  const pruning::Profile* profile = nullptr;
  std::uint64_t anchor = 0;  // pruning::session_anchor() of the conversation
};

// What the proxy's state says about it.
struct PolicyFacts {
  pruning::Runway runway;  // unknown: the profile alone decides
  pruning::SessionMemory memory;
  double bill_ratio = 1.0;
  double cached_prefix = 0;
  // The lines the session's model recalled (pruning/recalled_lines.hpp; null: none).
  std::shared_ptr<const pruning::RecalledLines> recalled;
  // Where they were found, for the request's admission and its bill.
  std::string runway_key;  // "": no runway (not a provider's chat request)
  std::uint64_t session = 0;
};
using PolicyFactsFn = std::function<PolicyFacts(const PolicyQuery&)>;

struct PolicyStep {
  pruning::Decision decision;
  providers::ParsedRequest* request = nullptr;  // pruned as decided: the one to write
  pruning::PipelineResult result;
  double reserved_output = 0;  // the output cap the provider reserves (OpenAI, Anthropic)
  std::string runway_key;      // PolicyFacts' for this request
  std::uint64_t session = 0;
  // Second parses for harder levels; `request` may point into one.
  std::vector<providers::ParseOutcome> reparsed;
};

// decide() with `facts`, then the pipeline at the level decided. `request`
// was parsed from `body` (still alive) and counted as `counted`.
PolicyStep policy_step(const providers::ChatRoute& route, std::string_view body, providers::ParsedRequest& request,
                       const pruning::Counted& counted, const pruning::Profile& profile,
                       const pruning::TokenCounter& counter, DietCaches& caches, const PolicyFactsFn& facts);

}  // namespace td::diet
