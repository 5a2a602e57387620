// The usage ledger's SQLite file: schema, inserts, the report's aggregate
// query (ledger_store.cpp), and the state the proxy keeps beside its rows
// (ledger_state.cpp): the per-model estimator calibration and the recaps a
// model wrote.
//
// One LedgerStore is one SQLite connection and is used by one thread at a
// time: the ledger's writer thread in `serve`, the main thread in
// `tokendiet usage`. The file is in WAL mode with synchronous=NORMAL: a
// committed transaction is in the WAL file before COMMIT returns, so it
// survives the process being killed (kill -9); only an OS crash or power loss
// can take the last few transactions with it.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ledger/ledger_row.hpp"

struct sqlite3;
struct sqlite3_stmt;

namespace td::ledger {

// PRAGMA user_version of the schema this build writes. Bump it with a
// migration step in ledger_store.cpp whenever a table changes.
inline constexpr int kLedgerSchemaVersion = 7;  // 2: the recovery column; 3: evicted_tasks; 4: recalled;
                                                // 5: the recap_summaries table; 6: survival's columns;
                                                // 7: the arm and the outcome fields

// The estimator's correction for one model: upstream prompt tokens divided by
// our estimate, averaged over `samples` requests.
struct CalibrationEntry {
  std::string model;
  double ratio = 1.0;
  std::int64_t samples = 0;
  bool operator==(const CalibrationEntry&) const = default;
};

// A recap's text as a model wrote it, under its cache key
// (diet/recap_summary.hpp: the prefix hash and the summarizer); ""
// records that the summarizer failed for it (the extractive recap stands).
struct RecapSummaryRow {
  std::uint64_t key = 0;
  std::string text;
  bool operator==(const RecapSummaryRow&) const = default;
};

// How `tokendiet usage` groups rows.
enum class GroupBy { Model, Day, Session, Provider, Key };

// Sums over the rows of one (group, model) pair; model is kept apart so each
// sum can be priced with that model's price.
struct UsageSums {
  std::string group;  // model name, YYYY-MM-DD (UTC), session, provider or key fingerprint
  std::string model;
  std::int64_t requests = 0;
  std::int64_t tokens_before = 0, tokens_after = 0, tokens_saved = 0;
  std::int64_t prompt = 0, completion = 0, cached_read = 0, cache_write = 0, reasoning = 0;
  std::int64_t fail_open = 0;
  std::int64_t errors = 0;  // status 0 or >= 400
  std::int64_t first_ms = 0, last_ms = 0;
};

// One session's rows of one model in one arm, summed, for `tokendiet usage
// --compare` (ledger/arm_comparison.hpp). Shadow rows are left out: a shadow
// profile is no experiment.
struct SessionSums {
  std::string unit;  // the session: "k:" its key, else "s:" its id, else "r:" the row alone
  std::string model;
  std::string arm;  // "control", or "treatment" (also the rows before the arm was stored)
  std::int64_t requests = 0;
  double cost_usd = 0;  // the input of the rows priced when written
  // Rows with usage not priced when written, and their billed input, for a
  // price now.
  std::int64_t unpriced = 0, prompt = 0, cached_read = 0, cache_write = 0;
  std::int64_t rereads = 0, recall_rounds = 0, context_errors = 0, rate_limited = 0;  // rate_limited: status 429
  bool operator==(const SessionSums&) const = default;
};

class LedgerStore {
 public:
  enum class Access { ReadWrite, ReadOnly };

  struct Opened {
    std::unique_ptr<LedgerStore> store;  // null on error
    std::string error;
  };

  // ReadWrite creates the file (0600) and missing parent directories (0700),
  // switches it to WAL and creates or migrates the schema. ReadOnly requires
  // an existing ledger and refuses one newer than this build.
  static Opened open(const std::string& path, Access access);

  ~LedgerStore();
  LedgerStore(const LedgerStore&) = delete;
  LedgerStore& operator=(const LedgerStore&) = delete;

  // Inserts the rows in one transaction. "" on success, else why not (and
  // then none of them is stored).
  std::string insert(std::span<const LedgerRow> rows);
  // The id of the last row inserted (an insert's rows have consecutive ids:
  // its transaction holds the write lock).
  std::int64_t last_insert_id() const;

  // Rows with time_ms >= since_ms, oldest first, at most `limit`.
  std::vector<LedgerRow> rows_since(std::int64_t since_ms, std::int64_t limit = -1);

  // Sums per (group, model) over rows with time_ms >= since_ms, and when
  // `session` is not empty, whose session starts with it (an id as the
  // table shows it cut, or whole).
  std::vector<UsageSums> sums(GroupBy by, std::int64_t since_ms, std::string_view session = {});

  // Sums per (session, model, arm) over rows with time_ms >= since_ms
  // that name a model, shadow rows left out.
  std::vector<SessionSums> session_sums(std::int64_t since_ms);

  std::vector<CalibrationEntry> load_calibration();
  // Upserts every entry in one transaction; "" on success.
  std::string save_calibration(const std::vector<CalibrationEntry>& entries);

  // The newest `limit` recap summaries, oldest first.
  std::vector<RecapSummaryRow> load_recap_summaries(std::size_t limit);
  // Stores the rows in one transaction (a key already stored keeps its first
  // text), then keeps only the newest `keep`; "" on success.
  std::string save_recap_summaries(const std::vector<RecapSummaryRow>& rows, std::size_t keep);

  int schema_version();
  const std::string& path() const { return path_; }

 private:
  LedgerStore(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  std::string migrate();
  // What a query reads for column `name` of this file: the name, or for a
  // column added after the file's schema version (an older file opened
  // read-only, so not migrated) the value the rows before it get.
  std::string readable_column(std::string_view name);
  // The INSERT of 2^k rows at once, prepared on first use and kept.
  sqlite3_stmt* insert_statement(unsigned k);

  // Rows go in blocks of up to 2^kMaxInsertLog2 per statement: SQLite's
  // per-statement work (cursor setup, halt, reset) dominated the writer's
  // CPU when every row had its own.
  static constexpr unsigned kMaxInsertLog2 = 5;
  sqlite3* db_ = nullptr;
  sqlite3_stmt* insert_[kMaxInsertLog2 + 1] = {};
  std::string path_;
};

// Creates the missing directories of `dir` with mode 0700 (like mkdir -p).
// "" on success, else why not.
std::string make_private_dirs(const std::string& dir);

}  // namespace td::ledger
