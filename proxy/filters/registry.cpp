// The filter registry. Order matters: request phases run in this order, and
// each response body filter sees the bytes the previous one produced.
// To add a filter: one file pair proxy/filters/<name>_filter.{hpp,cpp} and
// one line below.
#include <algorithm>
#include <memory>
#include <thread>
#include <vector>

#include "config/config.hpp"
#include "config/match.hpp"
#include "ledger/ledger.hpp"
#include "proxy/filters/archive_filter.hpp"
#include "proxy/filters/archive_write_filter.hpp"
#include "proxy/filters/dashboard_filter.hpp"
#include "proxy/filters/diet_filter.hpp"
#include "proxy/filters/explain_filter.hpp"
#include "proxy/phases/filter.hpp"
#include "proxy/filters/ledger_filter.hpp"
#include "proxy/filters/plan_ahead_filter.hpp"
#include "proxy/filters/profile_header_filter.hpp"
#include "proxy/filters/quota_filter.hpp"
#include "proxy/filters/recall_offer_filter.hpp"
#include "proxy/filters/recall_filter.hpp"
#include "proxy/filters/recovery_filter.hpp"
#include "proxy/telemetry/process_state.hpp"
#include "proxy/filters/usage_filter.hpp"
#include "shared_state/shared_recap.hpp"

namespace td::proxy {

std::vector<std::unique_ptr<Filter>> make_filters(const config::Config& config) {
  return make_filters(config, nullptr);
}

std::vector<std::unique_ptr<Filter>> make_filters(const config::Config& config,
                                                  std::shared_ptr<const diet::RecapSummarizer> summarizer) {
  std::vector<std::unique_ptr<Filter>> filters;
  // With a store shared by several replicas, the recaps a model writes are
  // shared too: every replica renders the same bytes for the same history.
  shared_state::SharedStore* shared = process_state().shared_store();
  if (shared && summarizer)
    summarizer = std::make_shared<shared_state::SharedRecapSummarizer>(std::move(summarizer), *shared);
  // Usage ledger row + /metrics in the logging phase. Before the diet so its
  // request phase (the in-flight gauge) sees every request; it has no body
  // hooks, so the diet still sees the request body first.
  filters.push_back(std::make_unique<LedgerFilter>(process_state(), std::make_shared<const config::Config>(config)));
  // x-tokendiet-profile: the request's own profile, or a 400 for a name not configured.
  filters.push_back(std::make_unique<ProfileHeaderFilter>(config));
  // GET /v1/tokendiet/archive/<id>: answered here, read on the archive's thread.
  filters.push_back(
      std::make_unique<ArchiveFilter>([] { return process_state().archive(); }, &process_state().archive_thread()));
  // GET /tokendiet/ and /v1/tokendiet/stats: answered here, the ledger read
  // and the live runways listed on the dashboard's thread; the stats cache
  // outlives reloads.
  static const auto dashboard_cache = std::make_shared<DashboardCache>();
  filters.push_back(std::make_unique<DashboardFilter>(
      config.admin_token,
      [] {
        const ledger::Ledger* l = process_state().ledger();
        return l ? DashboardFilter::LedgerSource{l->path(), l->feed()} : DashboardFilter::LedgerSource{};
      },
      &process_state().dashboard_thread(), dashboard_cache,
      [] { return dashboard_runways(process_state().runways(), process_state().shared_store()); },
      [cfg = std::make_shared<const config::Config>(config)](std::string_view model) {
        return config::price_for(*cfg, model);
      }));
  // Request body: the diet, with the process's caches, stores and threads
  // (they outlive reloads), then what follows from its decision. While the
  // replicas share the policy's state every diet runs on a diet thread,
  // which waits there for Redis: unless configured, as many as I/O threads.
  const unsigned diet_threads =
      config.diet_threads || !shared
          ? config.diet_threads
          : std::max(diet_thread_count(0), config.threads ? config.threads : std::thread::hardware_concurrency());
  const DietServices services{
      .caches = &process_state().diet_caches(),
      .calibration = &process_state().calibration(),
      .workers = &process_state().diet_workers(diet_threads),
      .policy =
          PolicyState(&process_state().runways(), &process_state().sessions(), &process_state().calibration(), shared),
      .archive = DietArchive{[] { return process_state().archive(); }, &process_state().archive_thread(),
                             [] { process_state().count_archive_failure(); }},
      .summarizer = std::move(summarizer),
  };
  filters.push_back(std::make_unique<DietFilter>(config, services));
  // The plan a later request of the session will look up, computed meanwhile on a thread of its own.
  filters.push_back(std::make_unique<PlanAheadFilter>(services.caches, &process_state().ahead_thread(),
                                                      &process_state().plan_ahead_counts()));
  // Semantic eviction's outputs kept in the archive before the request goes.
  filters.push_back(std::make_unique<ArchiveWriteFilter>(config, services));
  // The runway: the request's ask taken, held or refused (429); settled on the answer.
  filters.push_back(std::make_unique<QuotaFilter>(services.policy));
  // tokendiet_recall offered to a request that went out with tombstones.
  filters.push_back(std::make_unique<RecallOfferFilter>(config, services.workers));
  // The failure phase: a context-length error retried once, compressed to fit.
  filters.push_back(std::make_unique<RecoveryFilter>(config, process_state().diet_caches()));
  // The recall loop: a round that called tokendiet_recall continued upstream,
  // the rounds merged into one response. Before usage, which reads the merge.
  filters.push_back(std::make_unique<RecallFilter>(services.policy));
  // After the diet: include_usage is spliced into the final body; tees every
  // response body and scrubs what the injection added.
  filters.push_back(std::make_unique<UsageFilter>(config));
  // Response head: the explain headers, from the reports the filters before it published.
  filters.push_back(std::make_unique<ExplainFilter>());

  return filters;
}

}  // namespace td::proxy
