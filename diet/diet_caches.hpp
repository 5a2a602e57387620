// The caches the diet's steps use (diet/diet.hpp): resent message
// elements for the parse step, counts and pruned forms for the count and
// prune steps. Each changes how fast a request goes on its diet, never what
// it becomes.
//
// One object per owner, passed by reference, none process-wide: the proxy's
// lives in ProcessState (it outlives config reloads, as the statics it replaces
// did), `tokendiet replay` makes its own, and a test can make two that never
// warm each other.
#pragma once

#include "providers/parsed_message_memo.hpp"
#include "diet/recap_summary_cache.hpp"
#include "pruning/pipeline_caches.hpp"

namespace td::diet {

struct DietCaches {
  providers::ParsedMessageMemo parsed;  // parse step
  pruning::PipelineCaches pipeline;     // count and prune steps
  RecapSummaryCache summaries;          // the recaps a model wrote (prune step; the diet filter fills it)
};

}  // namespace td::diet
