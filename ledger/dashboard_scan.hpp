// The dashboard's figures of the ledger's rows (docs/design.md §Dashboard),
// summed in one pass over the rows: the all-time totals, the window's
// totals, series, groupings, outcomes, the arms' sums and the sessions the
// arm comparison resamples. The page's stats were a dozen queries, each
// reading every row of the window again (benchmarks.md §The dashboard's
// stats API); a row is now read once, and the figures are those the queries
// gave (tests/unit/ledger/dashboard_stats_test.cpp keeps the queries and
// checks it).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "ledger/row_feed.hpp"
#include "ledger/session_tally.hpp"

namespace td::ledger {

// The sums every grouping shows. Integer columns are summed as doubles as
// SQLite's TOTAL() sums them, so a figure is the same double.
struct StatsSums {
  std::int64_t requests = 0, unpriced = 0;
  double tokens_in = 0, tokens_sent = 0, tokens_saved = 0, prompt = 0, completion = 0, cached_read = 0, cache_write = 0,
         input_cost_usd = 0, errors = 0, fail_open = 0;
};

struct StatsGroup {
  std::string name, model;
  StatsSums sums;
};

struct ArmStats {
  std::int64_t requests = 0;
  std::set<std::string> sessions;  // session keys, else session ids
  double input_cost_usd = 0, tokens_in = 0, tokens_sent = 0, rereads = 0, recall_rounds = 0, context_errors = 0,
         rate_limited = 0;
};

struct StatsScan {
  StatsSums totals, window;
  std::map<std::int64_t, StatsSums> series;  // by bucket start
  // Groups by model, (session, model) and (key fingerprint, model), each
  // ordered by tokens in, the most first, then name and model.
  std::vector<StatsGroup> by_model, by_session, by_key;
  // (name, requests), the most first, then by name.
  std::vector<std::pair<std::string, std::int64_t>> modes, survival, recovery;
  double held = 0, wait_ms = 0;
  bool any_in_window = false;
  std::int64_t max_wait_ms = 0;
  double requests_recalling = 0, recall_rounds = 0;
  std::map<std::string, ArmStats> arms;  // arm != ""
  std::vector<SessionSums> sessions;     // the window's, for compare_arms()
};

// The sums of the rows read so far, kept between answers (by the dashboard
// filter) so that an answer reads only the rows added since the last one.
// Rows are read in id order, so a sum resumed is the sum read afresh, to
// the bit. The window's sums go on while the window moved forward past no
// row read (else its rows are read again, from its first row's id: a day's
// window that slides past old rows reads a day of rows, not the table);
// the all-time totals go on until a row read is gone (deleted: the table
// holds fewer rows than were read), then every row is read again. Several
// writers are one: SQLite gives a row an id above every committed row's.
// Rows are never updated in place (the ledger only inserts). One caller at
// a time.
class RunningStats {
 public:
  RunningStats();
  ~RunningStats();
  RunningStats(RunningStats&&) noexcept;
  RunningStats& operator=(RunningStats&&) noexcept;

  // Brings the sums up to the table's rows (in the caller's read
  // transaction) for the window [since_ms, now_ms] in buckets of
  // `bucket_ms`. "" on success, else SQLite's reason (and the sums start
  // over next time). `feed`: the rows the ledger's writer at `path`
  // committed, summed as handed over rather than read back (row_feed.hpp).
  std::string update(sqlite3* db, const std::string& path, std::int64_t since_ms, std::int64_t now_ms,
                     std::int64_t bucket_ms, RowFeed* feed = nullptr);
  StatsScan figures() const;
  // Rows the last update() read (from the table or the feed), those of
  // them the feed handed over, and whether it resumed (for tests).
  std::int64_t rows_read() const;
  std::int64_t rows_fed() const;
  bool resumed() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace td::ledger
