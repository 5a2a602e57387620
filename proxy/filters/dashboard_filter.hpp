// The dashboard (docs/design.md §Dashboard): GET /tokendiet/ (one page, its
// assets compiled into the binary) and GET /v1/tokendiet/stats (the page's
// figures as JSON, from the ledger). Answered in phase 1, never sent upstream.
//
// Access: a loopback client, or one sending `admin_token` (config) as
// `Authorization: Bearer <token>`, `x-tokendiet-admin-token` or the query's
// `token=` (for the page opened in a browser); compared in constant time.
// Others get 403 (no token configured) or 401 (a token missing or wrong).
//
// The stats are read on the dashboard's thread
// (process_state().dashboard_thread(), nice 10) while the request is paused,
// and kept for kCacheFor (longer for a slow query, kKeepFactor): a page
// polling every second, or many, costs the ledger one query a second at most.
// The runways come from the live stores (dashboard_runways.hpp), listed on
// the same thread and kept for kCacheFor alone, however long the ledger's
// figures are kept: they are the runways now.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "ledger/dashboard_scan.hpp"
#include "ledger/usage_report.hpp"
#include "proxy/filters/dashboard_runways.hpp"
#include "proxy/phases/filter.hpp"
#include "proxy/phases/off_thread.hpp"

namespace td::proxy {

// The newest answer of the stats API, shared by every request (and reloads).
struct DashboardCache {
  std::mutex mutex;
  std::string json;
  std::string query;         // the query it answered
  std::int64_t made_ms = 0;  // steady clock, ms
  std::int64_t keep_ms = 0;  // how long it is served: kCacheFor, or kKeepFactor x its query's time
  // The sums of the last answer, so the next reads only the rows added
  // since (ledger/dashboard_scan.hpp); one query at a time uses them.
  std::mutex running_mutex;
  ledger::RunningStats running;
  std::string runways;                 // the `runways` array, listed at runways_made_ms (steady, ms)
  std::int64_t runways_made_ms = 0;    // served for kCacheFor
  std::int64_t runways_listed_ms = 0;  // the same time, Unix ms (the answer's runways_ms)
};

class DashboardFilter final : public Filter {
 public:
  static constexpr std::string_view kPagePath = "/tokendiet/";
  static constexpr std::string_view kStatsPath = "/v1/tokendiet/stats";
  static constexpr std::chrono::milliseconds kCacheFor{1000};
  // An answer that took long (a year's window over a big ledger) is kept
  // for this many times its query's time: the ledger's reader then works at
  // most a twentieth of the time however often the page polls.
  static constexpr int kKeepFactor = 20;
  static constexpr std::chrono::milliseconds kReadWait{10'000};

  // `ledger()`: the open ledger's file ("" none) and the rows its writer
  // commits (ledger/row_feed.hpp), read per request since the ledger opens
  // after the filters are built; `thread`: where the ledger
  // is read (null: on the request's thread, for tests); `runways`: the live
  // runways (null: none listed); `prices`: the config's, for the arm
  // comparison's rows not priced when written (none: they stay unpriced).
  struct LedgerSource {
    std::string path;
    std::shared_ptr<ledger::RowFeed> feed;  // null: every new row read from the file
  };
  DashboardFilter(std::string admin_token, std::function<LedgerSource()> ledger, JobQueue* thread,
                  std::shared_ptr<DashboardCache> cache, RunwayLister runways = nullptr,
                  ledger::PriceLookup prices = {})
      : admin_token_(std::move(admin_token)),
        ledger_(std::move(ledger)),
        thread_(thread),
        cache_(std::move(cache)),
        runways_(std::move(runways)),
        prices_(prices ? std::move(prices) : [](std::string_view) -> const config::Price* { return nullptr; }) {}
  std::string_view name() const override { return "dashboard"; }
  FilterResult request_filter(RequestContext& ctx, HeaderMap& headers) override;

 private:
  std::string admin_token_;
  std::function<LedgerSource()> ledger_;
  JobQueue* thread_;
  std::shared_ptr<DashboardCache> cache_;
  RunwayLister runways_;
  ledger::PriceLookup prices_;
};

// Whether a request may see the dashboard: null when it may, else the refusal.
std::optional<LocalResponse> dashboard_refusal(bool loopback, std::string_view admin_token, const HeaderMap& headers,
                                               std::string_view query);

// The stats JSON for `query` (`window=<seconds>`, default a day), read from
// the ledger at `path` (without `runways`: with_runways() adds them), as of
// `now_ms` (ledger::DashboardStats::kNow: once the ledger's snapshot is taken).
std::string dashboard_stats(const std::string& path, std::string_view query, std::int64_t now_ms,
                            const ledger::PriceLookup& prices, ledger::RunningStats* running = nullptr,
                            ledger::RowFeed* feed = nullptr);

}  // namespace td::proxy
