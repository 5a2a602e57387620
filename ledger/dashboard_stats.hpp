// The dashboard's figures (GET /v1/tokendiet/stats, docs/design.md §Dashboard),
// read from the ledger through a read-only connection of its own and
// rendered as JSON. Called off the I/O threads (the dashboard's thread); a
// query never writes, so the proxy's writer is never held up by more than
// SQLite's WAL readers are.
#pragma once

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>

#include "ledger/dashboard_scan.hpp"
#include "ledger/usage_report.hpp"

namespace td::ledger {

class DashboardStats {
 public:
  // Opens `path` read-only; error() says why not (then json() says so too).
  explicit DashboardStats(const std::string& path);
  ~DashboardStats();
  DashboardStats(const DashboardStats&) = delete;
  DashboardStats& operator=(const DashboardStats&) = delete;

  const std::string& error() const { return error_; }

  // The figures as JSON: totals of every row; the series, groups, outcomes,
  // the arms compared (rows without a price then priced by `prices`) and
  // recent rows over [now_ms - window_ms, now_ms]. `running`: the sums of
  // the previous answer, brought up to date (only the rows added since are
  // read, ledger/dashboard_scan.hpp); null: every row read. `feed`: the
  // rows this process's writer committed to `path`, summed as handed over.
  // `now_ms`: kNow, the wall clock read once the answer's snapshot of the
  // ledger is taken.
  static constexpr std::int64_t kNow = -1;
  std::string json(std::int64_t now_ms, std::int64_t window_ms, const PriceLookup& prices,
                   RunningStats* running = nullptr, unsigned recent = 50, RowFeed* feed = nullptr);

 private:
  using Writer = rapidjson::Writer<rapidjson::StringBuffer>;
  bool has_column(const char* name);
  sqlite3* db_ = nullptr;
  std::string path_, error_;
};

}  // namespace td::ledger
