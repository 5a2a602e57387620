// The state the proxy keeps in the ledger's file beside its rows: the
// estimator's per-model calibration and the recaps a model wrote
// (ledger_store.hpp). Both are read once at startup and written by the
// ledger's writer thread.
#include <sqlite3.h>

#include <bit>

#include "ledger/ledger_store.hpp"
#include "ledger/sqlite_util.hpp"

namespace td::ledger {
using namespace sql;

namespace {

// Runs `step` for each item inside one transaction; "" on success, else why
// not (and then nothing of it is stored).
template <typename Items, typename Step>
std::string in_transaction(sqlite3* db, const Items& items, const char* what, Step step) {
  if (auto why = exec(db, "BEGIN IMMEDIATE"); !why.empty()) return "begin: " + why;
  for (const auto& item : items) {
    if (!step(item)) {
      std::string why = errmsg(db, what);
      exec(db, "ROLLBACK");
      return why;
    }
  }
  if (auto why = exec(db, "COMMIT"); !why.empty()) {
    exec(db, "ROLLBACK");
    return "commit: " + why;
  }
  return {};
}

// Steps a statement bound for one row; true when it is done.
bool step_once(sqlite3_stmt* s) {
  const int rc = sqlite3_step(s);
  sqlite3_reset(s);
  return rc == SQLITE_DONE;
}

}  // namespace

std::vector<CalibrationEntry> LedgerStore::load_calibration() {
  Stmt s(db_, "SELECT model, ratio, samples FROM calibration ORDER BY model");
  std::vector<CalibrationEntry> out;
  if (!s) return out;
  while (sqlite3_step(s.get()) == SQLITE_ROW)
    out.push_back({text(s.get(), 0), sqlite3_column_double(s.get(), 1), sqlite3_column_int64(s.get(), 2)});
  return out;
}

std::string LedgerStore::save_calibration(const std::vector<CalibrationEntry>& entries) {
  if (entries.empty()) return {};
  Stmt s(db_,
         "INSERT INTO calibration (model, ratio, samples, updated_ms) VALUES (?, ?, ?, ?) "
         "ON CONFLICT(model) DO UPDATE SET ratio = excluded.ratio, samples = excluded.samples, "
         "updated_ms = excluded.updated_ms");
  if (!s) return errmsg(db_, "prepare calibration");
  const std::int64_t now = now_ms();
  return in_transaction(db_, entries, "save calibration", [&](const CalibrationEntry& e) {
    bind_text(s.get(), 1, e.model);
    sqlite3_bind_double(s.get(), 2, e.ratio);
    sqlite3_bind_int64(s.get(), 3, e.samples);
    sqlite3_bind_int64(s.get(), 4, now);
    return step_once(s.get());
  });
}

// SQLite integers are signed: a key is stored as the int64 of the same bits.
std::vector<RecapSummaryRow> LedgerStore::load_recap_summaries(std::size_t limit) {
  Stmt s(db_,
         "SELECT key, text FROM (SELECT seq, key, text FROM recap_summaries ORDER BY seq DESC LIMIT ?) ORDER BY seq");
  std::vector<RecapSummaryRow> out;
  if (!s) return out;  // an older file, opened read-only: none
  sqlite3_bind_int64(s.get(), 1, static_cast<std::int64_t>(limit));
  while (sqlite3_step(s.get()) == SQLITE_ROW)
    out.push_back({std::bit_cast<std::uint64_t>(sqlite3_column_int64(s.get(), 0)), text(s.get(), 1)});
  return out;
}

std::string LedgerStore::save_recap_summaries(const std::vector<RecapSummaryRow>& rows, std::size_t keep) {
  if (rows.empty()) return {};
  Stmt insert(db_, "INSERT OR IGNORE INTO recap_summaries (key, text, created_ms) VALUES (?, ?, ?)");
  Stmt trim(db_, "DELETE FROM recap_summaries WHERE seq <= (SELECT MAX(seq) FROM recap_summaries) - ?");
  if (!insert || !trim) return errmsg(db_, "prepare recap summaries");
  const std::int64_t now = now_ms();
  std::string why = in_transaction(db_, rows, "save recap summaries", [&](const RecapSummaryRow& r) {
    sqlite3_bind_int64(insert.get(), 1, std::bit_cast<std::int64_t>(r.key));
    bind_text(insert.get(), 2, r.text);
    sqlite3_bind_int64(insert.get(), 3, now);
    return step_once(insert.get());
  });
  if (!why.empty()) return why;
  sqlite3_bind_int64(trim.get(), 1, static_cast<std::int64_t>(keep));  // one statement: atomic on its own
  return step_once(trim.get()) ? std::string() : errmsg(db_, "trim recap summaries");
}

}  // namespace td::ledger
