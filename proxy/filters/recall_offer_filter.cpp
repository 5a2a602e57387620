#include "proxy/filters/recall_offer_filter.hpp"

#include "json/json_scan.hpp"
#include "providers/recall_tool.hpp"
#include "proxy/filters/diet_result.hpp"
#include "proxy/reports/eviction_report.hpp"
#include "proxy/reports/recall_offer.hpp"

namespace td::proxy {

namespace {

// A big body's append, off the I/O thread: the job reads `body` only, so a
// wait that ends first can copy it back.
struct RecallAppend {
  providers::Api api;
  std::string body;  // as the diet wrote it
  std::string out;   // with the tool, when offered
  bool offered = false;
};

// Whether the body defines tools: a top-level "tools" array holding one.
bool defines_tools(std::string_view body) {
  const std::string_view tools = json::top_level_value(body, "tools");
  return !tools.empty() && tools.front() == '[' && tools.find('{') != std::string_view::npos;
}

// The offer, once the tool is in the body.
void publish_offer(RequestContext& ctx, std::uint64_t max_body_bytes) {
  DietResult& result = ctx.objects.get<DietResult>();
  RecallOffer& offer = ctx.objects.publish<RecallOffer>();
  offer.source = std::make_shared<RequestRecall>(ctx.key_fingerprint, std::move(result.outcome.result.archived),
                                                 std::move(result.outcome.result.hidden));
  if (const pruning::Profile* p = result.outcome.profile) {
    offer.limits.max_calls = p->recall_max_calls;
    offer.limits.max_answer_bytes = p->recall_max_answer_bytes;
  }
  offer.limits.max_body_bytes = max_body_bytes;
}

}  // namespace

FilterResult RecallOfferFilter::request_body_filter(RequestContext& ctx, const HeaderMap&, std::string& body) {
  const EvictionReport* eviction = ctx.objects.find<EvictionReport>();
  const DietResult* result = ctx.objects.find<DietResult>();
  if (!result || !result->outcome.profile || !result->outcome.profile->recall) return {};
  // Offered when the request went out holding a notice that names what it
  // hid (a cut's, its texts kept with the outcome, or a tombstone whose
  // output the archive kept), and to every agent turn the diet may cut (a
  // request that defines tools, the profile on and writing, not a client's
  // compaction nor a history the provider holds) from the session's first
  // request on: the tools head the provider's cached prefix, so a tool added
  // at the first cut would rewrite the whole cached history once
  // (docs/design.md §Recall, "From the first cut or from the first request").
  const diet::DietOutcome& o = result->outcome;
  const bool tombstones = eviction && !eviction->evicted_tasks.empty();
  const bool cuts = o.rewritten && !o.result.hidden.empty();
  const bool agent_turn = o.parsed && !o.fail_open && o.reason.empty() && o.decision.mode != pruning::Mode::None &&
                          o.decision.settings.write && defines_tools(body);
  if (!tombstones && !cuts && !agent_turn) return {};
  const providers::Api api = result->route.api;
  if (!workers_ || body.size() < offload_bytes_) {
    if (providers::append_recall_tool(api, body)) publish_offer(ctx, max_body_bytes_);
    return {};
  }
  auto job = std::make_shared<RecallAppend>(RecallAppend{api, std::move(body), {}, false});
  return run_off_thread(
      workers_, kAppendWait, std::move(job),
      OffThreadSteps<RecallAppend>{
          .work =
              [](RecallAppend& job, const std::function<bool()>&) {
                job.out = job.body;
                job.offered = providers::append_recall_tool(job.api, job.out);
              },
          .finish = [max = max_body_bytes_](PausedRequest request, RecallAppend& job) -> std::optional<LocalResponse> {
            *request.body = std::move(job.offered ? job.out : job.body);
            if (job.offered) publish_offer(*request.ctx, max);
            return std::nullopt;
          },
          .give_back = [](PausedRequest request, RecallAppend& job) -> std::optional<LocalResponse> {
            if (request.body) *request.body = job.body;
            return std::nullopt;
          },
      });
}

}  // namespace td::proxy
