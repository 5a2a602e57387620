#include <doctest/doctest.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include "ledger/ledger_store.hpp"
#include "rows.hpp"
#include "temp_dir.hpp"

using namespace td::ledger;
using td::test::sample_row;
using td::test::TempDir;

namespace {

std::string query_text(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* s = nullptr;
  std::string out;
  if (sqlite3_prepare_v2(db, sql, -1, &s, nullptr) == SQLITE_OK)
    while (sqlite3_step(s) == SQLITE_ROW) {
      const unsigned char* t = sqlite3_column_text(s, 0);
      if (!out.empty()) out += '|';
      out += t ? reinterpret_cast<const char*>(t) : "NULL";
    }
  sqlite3_finalize(s);
  sqlite3_close(db);
  return out;
}

// Runs `sql` on the ledger file at `path` as another program would.
void run_sql(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  REQUIRE(sqlite3_exec(db, sql, nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
}

// The columns schema 7 added, dropped: a file as schema 6 wrote it.
#define TD_DROP_SCHEMA_7                                                                               \
  "ALTER TABLE requests DROP COLUMN input_cost_usd; ALTER TABLE requests DROP COLUMN context_errors; " \
  "ALTER TABLE requests DROP COLUMN recall_rounds; ALTER TABLE requests DROP COLUMN rereads; "         \
  "ALTER TABLE requests DROP COLUMN tokens_diet; ALTER TABLE requests DROP COLUMN session_key; "       \
  "ALTER TABLE requests DROP COLUMN arm; "

unsigned mode_of(const std::string& path) {
  struct stat st {};
  REQUIRE(stat(path.c_str(), &st) == 0);
  return st.st_mode & 0777;
}

}  // namespace

TEST_CASE("a new ledger file: WAL, versioned schema, time index, private modes") {
  TempDir tmp;
  std::string path = tmp.file("state/tokendiet/usage.db");
  auto opened = LedgerStore::open(path, LedgerStore::Access::ReadWrite);
  REQUIRE_MESSAGE(opened.store, opened.error);
  CHECK(opened.store->schema_version() == kLedgerSchemaVersion);
  CHECK(query_text(path, "PRAGMA journal_mode") == "wal");
  CHECK(query_text(path, "SELECT name FROM sqlite_master WHERE type='index' AND tbl_name='requests'") ==
        "requests_time");
  CHECK(query_text(path, "SELECT name FROM sqlite_master WHERE type='table' ORDER BY name") ==
        "calibration|recap_summaries|requests");
  CHECK(mode_of(path) == 0600);
  CHECK(mode_of(tmp.file("state")) == 0700);
  CHECK(mode_of(tmp.file("state/tokendiet")) == 0700);

  // Opening again keeps the data and the version.
  REQUIRE(opened.store->insert(std::vector{sample_row(1)}).empty());
  opened.store.reset();
  auto again = LedgerStore::open(path, LedgerStore::Access::ReadWrite);
  REQUIRE(again.store);
  CHECK(again.store->schema_version() == kLedgerSchemaVersion);
  CHECK(again.store->rows_since(0).size() == 1);
}

TEST_CASE("rows read back exactly as written") {
  TempDir tmp;
  auto opened = LedgerStore::open(tmp.file("usage.db"), LedgerStore::Access::ReadWrite);
  REQUIRE(opened.store);
  std::vector<LedgerRow> rows;
  for (int i = 0; i < 5; ++i) rows.push_back(sample_row(i));
  rows[2].strategies.clear();
  rows[3].session = "quote\" and \n newline";
  rows[3].tokens_before = 9'000'000'000'000;  // beyond 32 bits
  rows[4].status = 0;
  rows[4].usage_present = false;
  rows[1].evicted_tasks = {"fix the parser", "write \"tests\"; then run them"};
  rows[1].recalled = {"td-0123456789abcdef0123456789abcdef", "td-00000000000000000000000000000000"};
  REQUIRE(opened.store->insert(rows).empty());
  CHECK(opened.store->rows_since(0) == rows);
  // since is inclusive and ordered by time.
  auto later = opened.store->rows_since(rows[3].time_ms);
  REQUIRE(later.size() == 2);
  CHECK(later[0] == rows[3]);
  CHECK(opened.store->rows_since(0, 2).size() == 2);
}

// Rows go in multi-row INSERTs of 32, 16, ... 1: every block size, and
// batches that end on each, keep each row's fields with that row.
TEST_CASE("batches of every size read back exactly, in order") {
  TempDir tmp;
  auto opened = LedgerStore::open(tmp.file("usage.db"), LedgerStore::Access::ReadWrite);
  REQUIRE(opened.store);
  std::vector<LedgerRow> all;
  int next = 0;
  for (int size : {1, 2, 3, 31, 32, 33, 63, 64, 65, 77}) {
    std::vector<LedgerRow> batch;
    for (int k = 0; k < size; ++k) {
      batch.push_back(sample_row(next++));
      if (k % 7 == 3) batch.back().strategies.clear();
    }
    REQUIRE(opened.store->insert(batch).empty());
    all.insert(all.end(), batch.begin(), batch.end());
  }
  CHECK(opened.store->rows_since(0) == all);
}

TEST_CASE("sums group by model, day, session, provider and key") {
  TempDir tmp;
  auto opened = LedgerStore::open(tmp.file("usage.db"), LedgerStore::Access::ReadWrite);
  REQUIRE(opened.store);
  std::vector<LedgerRow> rows = {sample_row(0, "a"), sample_row(1, "a"), sample_row(2, "b")};
  rows[2].time_ms = rows[0].time_ms + 86'400'000;  // next day
  rows[2].provider = "gemini";
  rows[1].status = 502;
  rows[1].tokens_after = rows[1].tokens_before + 5;  // grew: saved counts 0, not -5
  REQUIRE(opened.store->insert(rows).empty());

  auto by_model = opened.store->sums(GroupBy::Model, 0);
  REQUIRE(by_model.size() == 2);
  CHECK(by_model[0].group == "a");
  CHECK(by_model[0].requests == 2);
  CHECK(by_model[0].tokens_before == rows[0].tokens_before + rows[1].tokens_before);
  CHECK(by_model[0].tokens_saved == rows[0].tokens_saved());
  CHECK(by_model[0].prompt == rows[0].prompt_tokens + rows[1].prompt_tokens);
  CHECK(by_model[0].errors == 1);
  CHECK(by_model[1].group == "b");

  auto by_day = opened.store->sums(GroupBy::Day, 0);
  REQUIRE(by_day.size() == 2);
  CHECK(by_day[0].group == "2026-09-21");  // 1'790'000'000 s is 2026-09-21 UTC
  CHECK(by_day[1].group == "2026-09-22");

  auto by_provider = opened.store->sums(GroupBy::Provider, 0);
  REQUIRE(by_provider.size() == 2);
  CHECK(by_provider[0].group == "gemini");
  CHECK(by_provider[1].group == "openai");

  auto by_session = opened.store->sums(GroupBy::Session, 0);
  CHECK(by_session.size() == 3);  // (sess-0,a) (sess-1,a) (sess-2,b)

  CHECK(opened.store->sums(GroupBy::Key, 0).size() == 2);  // one key, two models
  CHECK(opened.store->sums(GroupBy::Model, rows[2].time_ms).size() == 1);
}

TEST_CASE("calibration table: save, upsert, load") {
  TempDir tmp;
  auto opened = LedgerStore::open(tmp.file("usage.db"), LedgerStore::Access::ReadWrite);
  REQUIRE(opened.store);
  CHECK(opened.store->load_calibration().empty());
  REQUIRE(opened.store->save_calibration({{"gemini-2.5-pro", 1.12, 40}, {"claude-x", 0.93, 7}}).empty());
  REQUIRE(opened.store->save_calibration({{"claude-x", 0.95, 9}}).empty());
  std::vector<CalibrationEntry> want = {{"claude-x", 0.95, 9}, {"gemini-2.5-pro", 1.12, 40}};
  CHECK(opened.store->load_calibration() == want);
}

TEST_CASE("read-only open: missing file, not a ledger, newer schema") {
  TempDir tmp;
  auto missing = LedgerStore::open(tmp.file("none.db"), LedgerStore::Access::ReadOnly);
  CHECK_FALSE(missing.store);
  CHECK(missing.error.find("no ledger at") != std::string::npos);

  std::string path = tmp.file("usage.db");
  REQUIRE(LedgerStore::open(path, LedgerStore::Access::ReadWrite).store);
  auto ro = LedgerStore::open(path, LedgerStore::Access::ReadOnly);
  REQUIRE_MESSAGE(ro.store, ro.error);
  CHECK(ro.store->rows_since(0).empty());
  ro.store.reset();

  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  REQUIRE(sqlite3_exec(db, "PRAGMA user_version = 99", nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
  auto newer = LedgerStore::open(path, LedgerStore::Access::ReadOnly);
  CHECK_FALSE(newer.store);
  CHECK(newer.error.find("newer") != std::string::npos);
  auto newer_rw = LedgerStore::open(path, LedgerStore::Access::ReadWrite);
  CHECK_FALSE(newer_rw.store);
  CHECK(newer_rw.error.find("newer") != std::string::npos);
}

TEST_CASE("an unusable path is an error, not a crash") {
  TempDir tmp;
  std::string blocker = tmp.file("file");
  REQUIRE(LedgerStore::open(blocker, LedgerStore::Access::ReadWrite).store);  // a regular file
  auto under_file = LedgerStore::open(blocker + "/usage.db", LedgerStore::Access::ReadWrite);
  CHECK_FALSE(under_file.store);
  CHECK_FALSE(under_file.error.empty());
  CHECK_FALSE(LedgerStore::open("", LedgerStore::Access::ReadWrite).store);
}

TEST_CASE("schema 2: the row keeps recovery's outcome; a schema 1 file is migrated, its rows kept") {
  TempDir tmp;
  std::string path = tmp.file("usage.db");
  auto opened = LedgerStore::open(path, LedgerStore::Access::ReadWrite);
  REQUIRE_MESSAGE(opened.store, opened.error);
  LedgerRow retried = sample_row(1);
  retried.recovery = "retried";
  REQUIRE(opened.store->insert(std::vector{retried, sample_row(2)}).empty());
  auto rows = opened.store->rows_since(0);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].recovery == "retried");
  CHECK(rows[1].recovery.empty());
  opened.store.reset();

  // The same file as schema 1 wrote it: no recovery column.
  run_sql(path, TD_DROP_SCHEMA_7
          "ALTER TABLE requests DROP COLUMN runway_tokens; ALTER TABLE requests DROP COLUMN quota_group; "
          "ALTER TABLE requests DROP COLUMN wait_ms; ALTER TABLE requests DROP COLUMN survival; "
          "ALTER TABLE requests DROP COLUMN recalled; ALTER TABLE requests DROP COLUMN evicted_tasks; "
          "ALTER TABLE requests DROP COLUMN recovery; DROP TABLE recap_summaries; "
          "PRAGMA user_version = 1");
  auto ro = LedgerStore::open(path, LedgerStore::Access::ReadOnly);
  REQUIRE(ro.store);
  CHECK(ro.store->schema_version() == 1);
  CHECK(ro.store->rows_since(0).size() == 2);  // `tokendiet usage` reads it before the proxy migrates it
  ro.store.reset();
  auto migrated = LedgerStore::open(path, LedgerStore::Access::ReadWrite);
  REQUIRE_MESSAGE(migrated.store, migrated.error);
  CHECK(migrated.store->schema_version() == kLedgerSchemaVersion);
  rows = migrated.store->rows_since(0);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].recovery.empty());  // what schema 1 did not store
  CHECK(rows[0].tokens_before == sample_row(1).tokens_before);
}

// Schema 1 files (before recovery, evicted_tasks, recalled and recap_summaries) are brought to
// the current schema when opened for writing, their rows kept.
TEST_CASE(
    "a schema-1 ledger gains the recovery, evicted_tasks and recalled columns and the recap_summaries table, rows "
    "kept") {
  TempDir tmp;
  const std::string path = tmp.file("usage.db");
  run_sql(path,
          "CREATE TABLE requests (id INTEGER PRIMARY KEY, time_ms INTEGER NOT NULL, request_id TEXT NOT "
          "NULL DEFAULT '', session TEXT NOT NULL DEFAULT '', key_fingerprint TEXT NOT NULL DEFAULT '', "
          "provider TEXT NOT NULL DEFAULT '', model TEXT NOT NULL DEFAULT '', profile TEXT NOT NULL "
          "DEFAULT '', mode TEXT NOT NULL DEFAULT '', tokens_before INTEGER NOT NULL DEFAULT 0, "
          "tokens_after INTEGER NOT NULL DEFAULT 0, prompt_tokens INTEGER NOT NULL DEFAULT 0, "
          "completion_tokens INTEGER NOT NULL DEFAULT 0, cached_read_tokens INTEGER NOT NULL DEFAULT 0, "
          "cache_write_tokens INTEGER NOT NULL DEFAULT 0, reasoning_tokens INTEGER NOT NULL DEFAULT 0, "
          "usage_present INTEGER NOT NULL DEFAULT 0, status INTEGER NOT NULL DEFAULT 0, ttfb_ms INTEGER "
          "NOT NULL DEFAULT 0, total_ms INTEGER NOT NULL DEFAULT 0, stream INTEGER NOT NULL DEFAULT 0, "
          "strategies TEXT NOT NULL DEFAULT '', fail_open INTEGER NOT NULL DEFAULT 0, bytes_in INTEGER "
          "NOT NULL DEFAULT 0, bytes_out INTEGER NOT NULL DEFAULT 0);"
          "CREATE TABLE calibration (model TEXT PRIMARY KEY, ratio REAL NOT NULL, samples INTEGER NOT "
          "NULL, updated_ms INTEGER NOT NULL);"
          "INSERT INTO requests (time_ms, model) VALUES (5, 'old-model');"
          "PRAGMA user_version = 1;");
  auto opened = LedgerStore::open(path, LedgerStore::Access::ReadWrite);
  REQUIRE(opened.store);
  CHECK(opened.store->schema_version() == kLedgerSchemaVersion);
  auto rows = opened.store->rows_since(0);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].model == "old-model");
  CHECK(opened.store->save_recap_summaries({{7, "a recap"}}, 10).empty());  // schema 5's table
  CHECK(opened.store->load_recap_summaries(10) == std::vector<RecapSummaryRow>{{7, "a recap"}});
  CHECK(rows[0].evicted_tasks.empty());
  LedgerRow r = sample_row(1);
  r.evicted_tasks = {"a task"};
  r.recalled = {"td-0123456789abcdef0123456789abcdef"};
  REQUIRE(opened.store->insert(std::span(&r, 1)).empty());
  CHECK(opened.store->rows_since(0).back().evicted_tasks == std::vector<std::string>{"a task"});
  CHECK(opened.store->rows_since(0).back().recalled == r.recalled);
}

// Schema 6 stores survival's report; a schema-5 file (without those columns)
// reads as "none" until the proxy opens it for writing and migrates it.
TEST_CASE("schema 6: survival's outcome, wait, quota group and runway kept; a schema-5 file migrated, rows kept") {
  TempDir tmp;
  const std::string path = tmp.file("usage.db");
  auto opened = LedgerStore::open(path, LedgerStore::Access::ReadWrite);
  REQUIRE_MESSAGE(opened.store, opened.error);
  LedgerRow held = sample_row(1);
  held.survival = "wait";
  held.wait_ms = 1234;
  held.quota_group = "openai:team-a";
  held.runway_tokens = 0;
  LedgerRow plain = sample_row(3);
  plain.runway_tokens.reset();
  REQUIRE(opened.store->insert(std::vector{held, plain}).empty());
  auto rows = opened.store->rows_since(0);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0] == held);
  CHECK(rows[1] == plain);
  CHECK_FALSE(rows[1].runway_tokens.has_value());
  CHECK(query_text(path, "SELECT runway_tokens FROM requests ORDER BY id") == "0|NULL");
  opened.store.reset();

  // The file as schema 5 wrote it.
  run_sql(path, TD_DROP_SCHEMA_7
          "ALTER TABLE requests DROP COLUMN runway_tokens; ALTER TABLE requests DROP COLUMN quota_group; "
          "ALTER TABLE requests DROP COLUMN wait_ms; ALTER TABLE requests DROP COLUMN survival; "
          "PRAGMA user_version = 5");
  auto ro = LedgerStore::open(path, LedgerStore::Access::ReadOnly);
  REQUIRE_MESSAGE(ro.store, ro.error);
  rows = ro.store->rows_since(0);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].survival.empty());
  CHECK(rows[0].wait_ms == 0);
  CHECK(rows[0].quota_group.empty());
  CHECK_FALSE(rows[0].runway_tokens.has_value());
  CHECK(rows[0].recalled == held.recalled);  // the columns around them still read right
  ro.store.reset();
  auto migrated = LedgerStore::open(path, LedgerStore::Access::ReadWrite);
  REQUIRE_MESSAGE(migrated.store, migrated.error);
  CHECK(migrated.store->schema_version() == kLedgerSchemaVersion);
  REQUIRE(migrated.store->insert(std::vector{held}).empty());
  rows = migrated.store->rows_since(0);
  REQUIRE(rows.size() == 3);
  CHECK_FALSE(rows[0].runway_tokens.has_value());  // the old row: not known
  CHECK(rows[1] == held);                          // the new one (same time, later id)
}

TEST_CASE("schema 7: the arm and the outcome fields kept; a schema-6 file read and migrated, rows kept") {
  TempDir tmp;
  const std::string path = tmp.file("usage.db");
  auto opened = LedgerStore::open(path, LedgerStore::Access::ReadWrite);
  REQUIRE_MESSAGE(opened.store, opened.error);
  LedgerRow control = sample_row(1);
  control.arm = "control";
  control.session_key = "00112233445566ff";
  control.tokens_diet = 321;
  control.rereads = 2;
  control.recall_rounds = 3;
  control.context_errors = 1;
  control.input_cost_usd = 0.001234;
  LedgerRow unpriced = sample_row(2);
  unpriced.input_cost_usd.reset();
  REQUIRE(opened.store->insert(std::vector{control, unpriced}).empty());
  auto rows = opened.store->rows_since(0);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0] == control);
  CHECK(rows[1] == unpriced);
  CHECK(query_text(path,
                   "SELECT arm || ',' || tokens_diet || ',' || rereads || ',' || recall_rounds || ',' || "
                   "context_errors FROM requests ORDER BY id LIMIT 1") == "control,321,2,3,1");
  CHECK(query_text(path, "SELECT input_cost_usd IS NULL FROM requests ORDER BY id") == "0|1");
  opened.store.reset();

  // The file as schema 6 wrote it: read as it is, then migrated.
  run_sql(path, TD_DROP_SCHEMA_7 "PRAGMA user_version = 6");
  auto ro = LedgerStore::open(path, LedgerStore::Access::ReadOnly);
  REQUIRE_MESSAGE(ro.store, ro.error);
  rows = ro.store->rows_since(0);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].arm.empty());
  CHECK(rows[0].tokens_diet == control.tokens_after);  // the diet's tokens were the ones sent
  CHECK(rows[0].rereads == 0);
  CHECK_FALSE(rows[0].input_cost_usd.has_value());
  CHECK(rows[0].runway_tokens == control.runway_tokens);  // the columns before them still read right
  const auto sums = ro.store->session_sums(0);
  REQUIRE(sums.size() == 2);
  CHECK(sums[0].arm == "treatment");  // rows before the arm was stored
  CHECK(sums[0].unit == "s:" + control.session);
  ro.store.reset();
  auto migrated = LedgerStore::open(path, LedgerStore::Access::ReadWrite);
  REQUIRE_MESSAGE(migrated.store, migrated.error);
  CHECK(migrated.store->schema_version() == kLedgerSchemaVersion);
  REQUIRE(migrated.store->insert(std::vector{control}).empty());
  rows = migrated.store->rows_since(0);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].tokens_diet == control.tokens_after);  // ordered by time: the old row, the new one, then
  CHECK(rows[1] == control);
  CHECK(rows[2] == [&] {
    LedgerRow r = unpriced;  // what schema 6 did not store
    r.tokens_diet = r.tokens_after;
    r.rereads = 0;
    r.recall_rounds = 0;
    r.context_errors = 0;
    r.arm.clear();
    r.session_key.clear();
    return r;
  }());
}

TEST_CASE("session sums: per session (its key, else its id, else the row), model and arm; shadow rows left out") {
  TempDir tmp;
  const std::string path = tmp.file("usage.db");
  auto opened = LedgerStore::open(path, LedgerStore::Access::ReadWrite);
  REQUIRE_MESSAGE(opened.store, opened.error);
  auto row = [](int i, std::string arm, std::string key, std::string session) {
    LedgerRow r = sample_row(i);
    r.arm = std::move(arm);
    r.session_key = std::move(key);
    r.session = std::move(session);
    r.rereads = i;
    r.recall_rounds = 1;
    r.context_errors = i == 2;
    r.status = i == 3 ? 429 : 200;
    r.input_cost_usd = i == 4 ? std::optional<double>() : std::optional<double>(0.5);
    return r;
  };
  REQUIRE(
      opened.store
          ->insert(std::vector{row(1, "control", "aa", "x"), row(2, "control", "aa", "y"),
                               row(3, "treatment", "", "s1"), row(4, "treatment", "", ""), row(5, "shadow", "bb", "")})
          .empty());
  const auto sums = opened.store->session_sums(0);
  REQUIRE(sums.size() == 3);
  CHECK(sums[0] == SessionSums{"k:aa", "gpt-4o", "control", 2, 1.0, 0, 0, 0, 0, 3, 2, 1, 0});
  const LedgerRow alone = sample_row(4);
  CHECK(sums[1] == SessionSums{"r:4", "gpt-4o", "treatment", 1, 0.0, 1, alone.prompt_tokens, alone.cached_read_tokens,
                               alone.cache_write_tokens, 4, 1, 0, 0});
  CHECK(sums[2] == SessionSums{"s:s1", "gpt-4o", "treatment", 1, 0.5, 0, 0, 0, 0, 3, 1, 0, 1});
}
