// Rows summed per session, model and arm (SessionSums), one row at a time:
// the one code `tokendiet usage --compare` (LedgerStore::session_sums) and
// the dashboard's comparison (ledger/dashboard_scan) sum sessions with, so
// their figures agree to the last bit (docs/design.md §Ledger and metrics,
// The arms compared). Both feed it rows in the table's order (rowid): a
// double's sum depends on the order of its terms.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ledger/ledger_store.hpp"

namespace td::ledger {

// The columns of one row the sums read.
struct SessionRow {
  std::int64_t id = 0;
  std::string_view session_key, session, model, arm;
  std::optional<double> cost;  // input_cost_usd; none: NULL (not priced when written)
  bool usage_present = false;
  std::int64_t prompt = 0, cached_read = 0, cache_write = 0;
  std::int64_t rereads = 0, recall_rounds = 0, context_errors = 0, status = 0;
};

// The SELECT list session_row() reads, `col(name)` giving each later
// column's expression (its name, or what an older file reads for it).
std::string session_columns(const std::function<std::string(std::string_view)>& col);
// The row at `first`, the first of session_columns()' columns. Its views
// live until the statement steps.
SessionRow session_row(sqlite3_stmt* s, int first);

class SessionTally {
 public:
  // Rows without a model and shadow rows are left out (a shadow profile is
  // no experiment); a row before the arm was stored is the treatment's.
  void add(const SessionRow& row) {
    if (const std::size_t at = find(row); at != kNone) add(at, row);
  }
  // The sums `row` adds to, made when first seen (kNone: a row left out),
  // and the row added to them: a caller that knows a row's session finds
  // it once.
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::size_t find(const SessionRow& row);
  void add(std::size_t at, const SessionRow& row);
  // The sums, ordered by unit, model and arm (bytewise): taken (the tally
  // starts over), or a copy.
  std::vector<SessionSums> take();
  std::vector<SessionSums> sorted() const;

 private:
  std::unordered_map<std::string, std::size_t> index_;
  std::vector<SessionSums> sums_;
  std::string key_;  // reused: a lookup allocates nothing once it has grown
};

}  // namespace td::ledger
