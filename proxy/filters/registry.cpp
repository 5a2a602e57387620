// The filter registry. Order matters: request phases run in this order, and
// each response body filter sees the bytes the previous one produced.
// To add a filter: one file proxy/<name>_filter.{hpp,cpp} and one line below.
#include <memory>
#include <vector>

#include "config/config.hpp"
#include "proxy/filters/archive_filter.hpp"
#include "proxy/filters/diet_filter.hpp"
#include "proxy/filters/explain_filter.hpp"
#include "proxy/phases/filter.hpp"
#include "proxy/filters/ledger_filter.hpp"
#include "proxy/filters/recall_filter.hpp"
#include "proxy/filters/recovery_filter.hpp"
#include "proxy/telemetry/telemetry.hpp"
#include "proxy/filters/usage_filter.hpp"

namespace td::proxy {

std::vector<std::unique_ptr<Filter>> make_filters(const config::Config& config) { return make_filters(config, nullptr); }

std::vector<std::unique_ptr<Filter>> make_filters(const config::Config& config,
                                                  std::shared_ptr<const diet::RecapSummarizer> summarizer) {
  std::vector<std::unique_ptr<Filter>> filters;
  // Usage ledger row + /metrics in the logging phase. Before the diet so its
  // request phase (the in-flight gauge) sees every request; it has no body
  // hooks, so the diet still sees the request body first.
  filters.push_back(std::make_unique<LedgerFilter>(telemetry()));
  // GET /v1/tokendiet/archive/<id>: answered here, read on the archive's thread.
  filters.push_back(std::make_unique<ArchiveFilter>([] { return telemetry().archive(); },
                                                    &telemetry().archive_thread()));
  // Request body: the diet, with the process's caches and diet threads (they
  // outlive reloads).
  filters.push_back(std::make_unique<DietFilter>(
      config, &telemetry().calibration(), telemetry().diet_caches(), &telemetry().diet_workers(config.diet_threads),
      PolicyState(&telemetry().runways(), &telemetry().sessions(), &telemetry().calibration()),
      DietArchive{[] { return telemetry().archive(); }, &telemetry().archive_thread(),
                  [] { telemetry().count_archive_failure(); }},
      std::move(summarizer)));
  // The failure phase: a context-length error retried once, compressed to fit.
  filters.push_back(std::make_unique<RecoveryFilter>(config, telemetry().diet_caches()));
  // The recall loop: a round that called tokendiet_recall continued upstream,
  // the rounds merged into one response. Before usage, which reads the merge.
  filters.push_back(std::make_unique<RecallFilter>());
  // After the diet: include_usage is spliced into the final body; tees every
  // response body and scrubs what the injection added.
  filters.push_back(std::make_unique<UsageFilter>(config));
  // Phase 4: the explain headers, from what the filters before it decided.
  filters.push_back(std::make_unique<ExplainFilter>());

  return filters;
}

}  // namespace td::proxy
