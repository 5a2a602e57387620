#include "proxy/filters/recall_filter.hpp"

#include <memory>
#include <vector>

#include "providers/api.hpp"
#include "providers/recall_merge.hpp"
#include "providers/recall_tool.hpp"
#include "proxy/phases/recall.hpp"

namespace td::proxy {
namespace {

struct RecallState final : FilterState {
  std::unique_ptr<providers::RecallMerge> merge;
  std::vector<providers::RecallCall> calls;  // the round's, while a continuation is asked for
  bool continuing = false;                   // between the round's end and the next round's first byte
  std::string out;
};

}  // namespace

void RecallFilter::upstream_response_filter(RequestContext& ctx, HeaderMap& headers) {
  if (!ctx.recall || ctx.status < 200 || ctx.status >= 300) return;
  const auto api = providers::api_for_target(ctx.target);
  if (!api) return;
  const std::string_view encoding = headers.get("content-encoding");
  if (!encoding.empty() && !iequals(encoding, "identity")) return;  // cannot be read
  const bool sse = headers.get("content-type").find("event-stream") != std::string_view::npos;
  auto merge = providers::RecallMerge::make(*api, sse);
  if (!merge) return;
  state<RecallState>(ctx).merge = std::move(merge);
  headers.erase("content-length");
}

void RecallFilter::response_body_filter(RequestContext& ctx, std::string& chunk, bool end_of_stream) {
  if (ctx.filter_state.size() <= slot() || !ctx.filter_state[slot()]) return;
  auto& st = state<RecallState>(ctx);
  if (!st.merge) return;
  st.out.clear();
  if (st.continuing && (!chunk.empty() || !end_of_stream)) st.continuing = false;  // the next round's bytes
  if (st.continuing && end_of_stream && chunk.empty()) {
    // The continuation did not come: the round ends as the upstream sent it.
    st.continuing = false;
    st.merge->finish(st.out);
    chunk.swap(st.out);
    return;
  }
  st.merge->feed(chunk, st.out);
  if (end_of_stream) {
    const auto& calls = st.merge->end_round(st.out);
    if (!calls.empty()) {
      if (ctx.recall_rounds < kMaxRounds) {
        st.calls = calls;
        st.continuing = true;
        ctx.continuation = true;
      } else {
        st.merge->finish(st.out);
      }
    }
  }
  chunk.swap(st.out);
}

bool RecallFilter::continuation_filter(RequestContext& ctx, std::string& body) {
  if (ctx.filter_state.size() <= slot() || !ctx.filter_state[slot()]) return false;
  auto& st = state<RecallState>(ctx);
  if (!st.continuing || !ctx.recall) return false;
  std::vector<std::string> results;
  for (const auto& call : st.calls) {
    auto args = providers::parse_recall_arguments(call.arguments);
    if (!args) {
      results.push_back("tokendiet_recall: the arguments must be an object with a string id");
      continue;
    }
    // A read of one archive file (docs/design.md §Recall: why on this thread).
    results.push_back(providers::recall_result_text(*args, ctx.recall->read(ctx.key_fingerprint, args->id)));
    ctx.recalled.push_back(args->id);
  }
  if (!st.merge->continue_with(body, results)) return false;
  ++ctx.recall_rounds;
  return true;
}

}  // namespace td::proxy
