// LedgerStore's aggregate reads: the usage report's sums per group and the
// arm comparison's sums per session (docs/design.md §Ledger and metrics).
#include <sqlite3.h>

#include <string>
#include <string_view>

#include "ledger/ledger_store.hpp"
#include "ledger/session_tally.hpp"
#include "ledger/sqlite_util.hpp"

namespace td::ledger {
using namespace sql;

std::vector<UsageSums> LedgerStore::sums(GroupBy by, std::int64_t since_ms, std::string_view session) {
  const char* key = "model";
  switch (by) {
    case GroupBy::Model:
      key = "model";
      break;
    case GroupBy::Day:
      key = "strftime('%Y-%m-%d', time_ms / 1000, 'unixepoch')";
      break;
    case GroupBy::Session:
      key = "session";
      break;
    case GroupBy::Provider:
      key = "provider";
      break;
    case GroupBy::Key:
      key = "key_fingerprint";
      break;
  }
  std::string sql = std::string("SELECT ") + key +
                    ", model, COUNT(*), SUM(tokens_before), SUM(tokens_after), "
                    "SUM(MAX(tokens_before - tokens_after, 0)), SUM(prompt_tokens), "
                    "SUM(completion_tokens), SUM(cached_read_tokens), SUM(cache_write_tokens), "
                    "SUM(reasoning_tokens), SUM(fail_open), "
                    "SUM(status = 0 OR status >= 400), MIN(time_ms), MAX(time_ms) "
                    "FROM requests WHERE time_ms >= ?1 AND (?2 = '' OR substr(session, 1, length(?2)) = ?2) "
                    "GROUP BY 1, 2 ORDER BY 1, 2";
  Stmt s(db_, sql.c_str());
  std::vector<UsageSums> out;
  if (!s) return out;
  sqlite3_bind_int64(s.get(), 1, since_ms);
  // An empty view may have no data pointer, which SQLite would bind as NULL.
  sqlite3_bind_text(s.get(), 2, session.empty() ? "" : session.data(), static_cast<int>(session.size()), SQLITE_STATIC);
  while (sqlite3_step(s.get()) == SQLITE_ROW) {
    sqlite3_stmt* q = s.get();
    UsageSums u;
    int c = 0;
    u.group = text(q, c++);
    u.model = text(q, c++);
    for (std::int64_t* v :
         {&u.requests, &u.tokens_before, &u.tokens_after, &u.tokens_saved, &u.prompt, &u.completion, &u.cached_read,
          &u.cache_write, &u.reasoning, &u.fail_open, &u.errors, &u.first_ms, &u.last_ms})
      *v = sqlite3_column_int64(q, c++);
    out.push_back(std::move(u));
  }
  return out;
}

std::vector<SessionSums> LedgerStore::session_sums(std::int64_t since_ms) {
  // Older files (opened read-only, so not migrated) lack the later columns.
  auto col = [&](std::string_view name) { return readable_column(name); };
  // Summed row by row in the table's order (`+time_ms`: no index), as the
  // dashboard sums them (ledger/session_tally.hpp).
  const std::string sql = "SELECT " + session_columns(col) + " FROM requests WHERE +time_ms >= ?";
  Stmt s(db_, sql.c_str());
  if (!s) return {};
  sqlite3_bind_int64(s.get(), 1, since_ms);
  SessionTally tally;
  while (sqlite3_step(s.get()) == SQLITE_ROW) tally.add(session_row(s.get(), 0));
  return tally.take();
}

}  // namespace td::ledger
