// The diet: the request body filter that puts a chat request's message array
// through the pruning pipeline (docs/design.md §Request flow).
//
//   route by path -> the diet's steps (diet/diet.hpp): parse, count
//   (with the model's tokenizer, or the calibrated estimator), decide, prune,
//   write (splices only what changed), thinking lowered -> the decision's
//   admission, the request's ask taken from its runway
//
// The policy (docs/design.md §Policy) decides with the process's runway and
// session stores (runway_account.hpp); the logging phase corrects the runway
// with the answer's rate-limit headers and billed usage.
//
// Fail open: a body the adapter cannot parse, a write it cannot splice, or any
// exception leaves the body exactly as the client sent it and records why in
// ctx.fail_open / ctx.fail_open_reason. Requests that are not chat requests
// (no adapter for the path) are not looked at. The proxy recomputes
// Content-Length from the final body after this phase.
//
// For models counted by the estimator, the logging phase feeds the
// calibration: what we estimated for the bytes sent vs what the upstream billed.
//
// Big bodies (limits.diet_offload_bytes and more) are dieted on a diet thread
// (telemetry().diet_workers()) while the request is paused, so the I/O thread
// serves other connections meanwhile. The diet thread owns the body until it
// is done and hands the result back on the request's thread; a wait that ends
// first (kOffloadWait, shutdown) sends the body as it came.
//
// Semantic eviction (docs/design.md §The archive): when the pruned request
// holds tombstones (PipelineResult::archived), their entries are written to
// the archive off the I/O thread (on the archive's thread, or on the diet
// thread that dieted the body) while the request is paused, and only then
// does the pruned request go. A failed write re-runs the diet without
// semantic eviction there (fail open: the request goes unpruned of those
// outputs), logged (ctx.archive_error) and counted. Without an archive,
// semantic eviction does not run at all. A request that went out with
// tombstones gets ctx.recall (the archive, for the recall loop) and names
// the evicted tasks (ctx.evicted_tasks: the log line and the ledger row).
// A recap a profile's summarizer has not summarized yet (recap_summary.hpp)
// takes the same way: the request is paused, and on a diet thread the model
// is asked once (within the summarizer's timeout_ms), its text cached under
// the prefix hash, and the diet run again with it.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "config/config.hpp"
#include "proxy/phases/filter.hpp"
#include "providers/route.hpp"
#include "diet/diet.hpp"
#include "proxy/filters/runway_account.hpp"
#include "proxy/phases/recall.hpp"
#include "pruning/archived_output.hpp"
#include "diet/recap_summarizer.hpp"
#include "diet/diet_caches.hpp"
#include "proxy/telemetry/work_pool.hpp"
#include "pruning/decision.hpp"

namespace td::tok { class Calibration; }
namespace td::archive { class Store; }

namespace td::proxy {

struct OffloadedDiet;  // a diet's job on another thread (diet_filter.cpp)

// The archive as the diet uses it: the store (null: none, and then semantic
// eviction is off), read when a request comes since the archive is opened
// after the filters are built; the thread small bodies' entries are written
// on (null: the request's own thread, for tests); what counts a failed write.
struct DietArchive {
  std::function<archive::Store*()> store;
  WorkPool* thread = nullptr;
  std::function<void()> count_failure;
};

// The recall loop's view of the archive (proxy/phases/recall.hpp): the
// entries this request's tombstones name, kept with the request. They were
// just written to the archive, so the loop reads them from memory and never
// reads a file on an I/O thread; an id no tombstone of the request names is
// unknown to the loop (GET /v1/tokendiet/archive/<id> still gives it back).
// Like the archive, it answers only the key that archived them.
class RequestRecall final : public RecallSource {
 public:
  RequestRecall(std::string key_fp, std::vector<pruning::ArchivedOutput> entries)
      : key_fp_(std::move(key_fp)), entries_(std::move(entries)) {}
  std::optional<std::string> read(std::string_view key_fp, std::string_view id) const override;

 private:
  std::string key_fp_;  // the key that archived them: only it reads them
  std::vector<pruning::ArchivedOutput> entries_;
};

class DietFilter final : public Filter {
 public:
  // `calibration` (may be null: fixed bytes/4 estimates, nothing learned) and
  // `caches` are the process-wide ones, telemetry().calibration() and
  // telemetry().diet_caches(): both outlive the filter, as does `workers`
  // (null: every diet on the request's thread).
  // `policy`: the runway and session stores the policy decides with (none:
  // the profile alone decides, as in replay).
  // `archive`: where semantic eviction's outputs go (none: it is off).
  // `summarizer` (null: every recap extractive) makes the recap summaries'
  // outbound calls; it needs `workers`.
  DietFilter(const config::Config& config, tok::Calibration* calibration, diet::DietCaches& caches,
             WorkPool* workers = nullptr, PolicyState policy = {}, DietArchive archive = {},
             std::shared_ptr<const diet::RecapSummarizer> summarizer = nullptr);

  // How long an offloaded diet may take, queue included, before the body
  // goes as it came.
  static constexpr std::chrono::milliseconds kOffloadWait{60'000};
  // How long the archive's writes may take, queue included, before the
  // request goes as it came.
  static constexpr std::chrono::milliseconds kArchiveWait{30'000};
  std::string_view name() const override { return "diet"; }
  FilterResult request_body_filter(RequestContext& ctx, const HeaderMap& headers,
                                                   std::string& body) override;
  void logging(const RequestContext& ctx) override;

 private:
  FilterResult offload(RequestContext& ctx, const HeaderMap& headers, const providers::ChatRoute& route,
                       std::string& body);
  FilterResult archive_then_send(RequestContext& ctx, const providers::ChatRoute& route, std::string& body,
                                 std::string rewritten, diet::DietOutcome diet);
  FilterResult hand_over(RequestContext& ctx, std::string& body, OffloadedDiet& job);
  FilterResult apply(RequestContext& ctx, const diet::DietOutcome& diet) const;
  bool semantic_eviction() const { return archive_.store && archive_.store(); }

  // A copy, shared with the diet threads' jobs: a job may outlive the filter.
  std::shared_ptr<const config::Config> config_;
  tok::Calibration* calibration_;
  diet::DietCaches& caches_;
  WorkPool* workers_;
  PolicyState policy_;
  std::shared_ptr<const diet::RecapSummarizer> summarizer_;
  bool any_profile_disabled_;  // only then is a body peeked for its profile
  DietArchive archive_;
};

// What the request phase does with a decision's admission: Send: nothing;
// Wait: the request is held that long before it goes upstream
// (ctx.delay_upstream); Reject: the answer, a 429 in the provider's error
// shape with Retry-After and x-tokendiet-error: runway_exhausted.
std::optional<LocalResponse> admit(RequestContext& ctx, const pruning::Admission& admission);

}  // namespace td::proxy
