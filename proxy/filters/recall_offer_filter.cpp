#include "proxy/filters/recall_offer_filter.hpp"

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

// The offer, once the tool is in the body.
void publish_offer(RequestContext& ctx, std::uint64_t max_body_bytes) {
  DietResult& result = ctx.objects.get<DietResult>();
  RecallOffer& offer = ctx.objects.publish<RecallOffer>();
  offer.source = std::make_shared<RequestRecall>(ctx.key_fingerprint, std::move(result.outcome.result.archived));
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
  // Only tombstones that went out, their outputs archived, are offered.
  if (!eviction || eviction->evicted_tasks.empty() || !result) return {};
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
