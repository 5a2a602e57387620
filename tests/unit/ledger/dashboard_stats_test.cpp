// The dashboard's stats (ledger/dashboard_stats, docs/design.md §Dashboard):
// the one pass over the rows gives the answer the queries it replaced gave
// (kept here as the reference: one query per figure, as SQLite sums them),
// and its arm comparison is `tokendiet usage --compare`'s. TD_STATS_LEDGER
// names a ledger to compare on besides the test's own (the 1,000,000-row one
// of scripts/bench/usage_compare.sh, benchmarks.md §The dashboard's stats
// API), in a test case skipped unless asked for.
#include <doctest/doctest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <sqlite3.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <vector>

#include "ledger/arm_comparison.hpp"
#include "ledger/arm_comparison_json.hpp"
#include "ledger/dashboard_stats.hpp"
#include "ledger/ledger.hpp"
#include "ledger/ledger_store.hpp"
#include "rows.hpp"
#include "temp_dir.hpp"

using namespace td::ledger;

namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

constexpr const char* kSums =
    "COUNT(*) AS requests, TOTAL(tokens_before) AS tokens_in, TOTAL(tokens_after) AS tokens_sent, "
    "TOTAL(MAX(tokens_before - tokens_after, 0)) AS tokens_saved, TOTAL(prompt_tokens) AS prompt, "
    "TOTAL(completion_tokens) AS completion, TOTAL(cached_read_tokens) AS cached_read, "
    "TOTAL(cache_write_tokens) AS cache_write, TOTAL(input_cost_usd) AS input_cost_usd, "
    "SUM(input_cost_usd IS NULL AND usage_present) AS unpriced, "
    "TOTAL(status = 0 OR status >= 400) AS errors, TOTAL(fail_open) AS fail_open";

void value(Writer& w, sqlite3_stmt* s, int col) {
  switch (sqlite3_column_type(s, col)) {
    case SQLITE_INTEGER:
      w.Int64(sqlite3_column_int64(s, col));
      return;
    case SQLITE_FLOAT: {
      const double d = sqlite3_column_double(s, col);
      if (d == static_cast<double>(static_cast<std::int64_t>(d)) && d < 9e15 && d > -9e15)
        w.Int64(static_cast<std::int64_t>(d));
      else
        w.Double(d);
      return;
    }
    case SQLITE_NULL:
      w.Null();
      return;
    default:
      w.String(reinterpret_cast<const char*>(sqlite3_column_text(s, col)));
  }
}

void rows(sqlite3* db, Writer& w, const std::string& sql, std::initializer_list<std::int64_t> params,
          bool one = false) {
  sqlite3_stmt* st = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK);
  int i = 1;
  for (std::int64_t p : params) sqlite3_bind_int64(st, i++, p);
  if (!one) w.StartArray();
  bool any = false;
  while (sqlite3_step(st) == SQLITE_ROW) {
    any = true;
    w.StartObject();
    for (int c = 0; c < sqlite3_column_count(st); ++c) {
      w.Key(sqlite3_column_name(st, c));
      value(w, st, c);
    }
    w.EndObject();
    if (one) break;
  }
  if (one && !any) w.Null();
  if (!one) w.EndArray();
  sqlite3_finalize(st);
}

std::string group_sql(const std::string& key, const std::string& where, unsigned limit) {
  return "SELECT " + key + " AS name, model, " + kSums + " FROM requests WHERE time_ms >= ?1 AND time_ms <= ?2" +
         where + " GROUP BY " + key + ", model ORDER BY tokens_in DESC, name, model LIMIT " + std::to_string(limit);
}

// The answer as the queries gave it, one query per figure, without the
// comparison.
std::string reference(const std::string& path, std::int64_t now_ms, std::int64_t window_ms) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  rapidjson::StringBuffer buf;
  Writer w(buf);
  const std::int64_t since = now_ms - window_ms;
  const std::int64_t bucket = std::max<std::int64_t>(1000, window_ms / 60 / 1000 * 1000);
  auto part = [&](const char* name, const std::string& sql, std::initializer_list<std::int64_t> params,
                  bool one = false) {
    w.Key(name);
    rows(db, w, sql, params, one);
  };
  const std::string window = " FROM requests WHERE time_ms >= ?1 AND time_ms <= ?2";
  w.StartObject();
  w.Key("now_ms");
  w.Int64(now_ms);
  w.Key("window_ms");
  w.Int64(window_ms);
  part("totals", std::string("SELECT ") + kSums + " FROM requests", {}, true);
  part("window_totals", std::string("SELECT ") + kSums + window, {since, now_ms}, true);
  w.Key("bucket_ms");
  w.Int64(bucket);
  part("series", "SELECT time_ms / ?3 * ?3 AS t, " + std::string(kSums) + window + " GROUP BY t ORDER BY t",
       {since, now_ms, bucket});
  part("by_model", group_sql("model", "", 50), {since, now_ms});
  part("by_session", group_sql("session", " AND session != ''", 20), {since, now_ms});
  part("by_key", group_sql("key_fingerprint", " AND key_fingerprint != ''", 20), {since, now_ms});
  for (const char* g : {"mode", "survival", "recovery"})
    part(std::string(g) == "mode" ? "modes" : g,
         std::string("SELECT ") + g + " AS name, COUNT(*) AS requests" + window +
             (std::string(g) == "mode" ? "" : std::string(" AND ") + g + " != ''") + " GROUP BY " + g +
             " ORDER BY requests DESC, name",
         {since, now_ms});
  part("waits", "SELECT TOTAL(wait_ms > 0) AS held, TOTAL(wait_ms) AS wait_ms, MAX(wait_ms) AS max_wait_ms" + window,
       {since, now_ms}, true);
  part("recalls", "SELECT TOTAL(recalled != '') AS requests_recalling, TOTAL(recall_rounds) AS recall_rounds" + window,
       {since, now_ms}, true);
  part("arms",
       "SELECT arm AS name, COUNT(*) AS requests, COUNT(DISTINCT CASE WHEN session_key != '' THEN session_key "
       "WHEN session != '' THEN session END) AS sessions, TOTAL(input_cost_usd) AS input_cost_usd, "
       "TOTAL(tokens_before) AS tokens_in, TOTAL(tokens_after) AS tokens_sent, TOTAL(rereads) AS rereads, "
       "TOTAL(recall_rounds) AS recall_rounds, TOTAL(context_errors) AS context_errors, "
       "TOTAL(status = 429) AS rate_limited" +
           window + " AND arm != '' GROUP BY arm ORDER BY arm",
       {since, now_ms});
  part("recent",
       "SELECT time_ms, request_id, session, key_fingerprint, model, profile, mode, arm, status, tokens_before, "
       "tokens_after, strategies, fail_open, survival, recovery, wait_ms, recalled != '' AS recalled, total_ms "
       "FROM requests ORDER BY id DESC LIMIT ?1",
       {50});
  w.Key("error");
  w.Null();
  w.EndObject();
  sqlite3_close(db);
  return {buf.GetString(), buf.GetSize()};
}

const td::config::Price kPrice{.model = "*", .input = 3, .cached_input = 0.3, .cache_write = 3.75, .output = 15};
const PriceLookup kPrices = [](std::string_view) { return &kPrice; };

// The answer's comparison taken out (checked against `usage --compare`'s
// below), the rest as text.
std::string without_comparison(const std::string& json, std::string* comparison) {
  rapidjson::Document d;
  d.Parse<rapidjson::kParseFullPrecisionFlag>(json.c_str());
  REQUIRE(d.IsObject());
  REQUIRE(d.HasMember("comparison"));
  rapidjson::StringBuffer c;
  Writer cw(c);
  d["comparison"].Accept(cw);
  *comparison = {c.GetString(), c.GetSize()};
  d.EraseMember("comparison");  // keeps the order of the rest
  rapidjson::StringBuffer buf;
  Writer w(buf);
  d.Accept(w);
  return {buf.GetString(), buf.GetSize()};
}

// What `tokendiet usage --compare --json --since` gives, its ledger list
// left out.
std::string usage_compare(const std::string& path, std::int64_t since) {
  auto opened = LedgerStore::open(path, LedgerStore::Access::ReadOnly);
  REQUIRE(opened.store);
  const ArmComparison c = compare_arms(opened.store->session_sums(since), kPrices);
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  w.Key("since_ms");
  w.Int64(since);
  write_comparison(w, c);
  w.EndObject();
  return {buf.GetString(), buf.GetSize()};
}

// Whether two answers are the same: every key in its place, every string
// and whole number equal, a fractional number (a sum of costs) equal but
// for its last bits: the queries summed the window's rows in the time
// index's order, the pass sums them in id order, and a row answered out of
// time order can round a sum differently.
bool same_json(const rapidjson::Value& a, const rapidjson::Value& b) {
  if (a.IsNumber() && b.IsNumber()) {
    if (a.IsInt64() && b.IsInt64()) return a.GetInt64() == b.GetInt64();
    const double x = a.GetDouble(), y = b.GetDouble();
    return std::fabs(x - y) <= 1e-12 * std::max(std::fabs(x), std::fabs(y));
  }
  if (a.GetType() != b.GetType()) return false;
  if (a.IsObject()) {
    if (a.MemberCount() != b.MemberCount()) return false;
    for (auto i = a.MemberBegin(), j = b.MemberBegin(); i != a.MemberEnd(); ++i, ++j)
      if (i->name != j->name || !same_json(i->value, j->value)) return false;
    return true;
  }
  if (a.IsArray()) {
    if (a.Size() != b.Size()) return false;
    for (rapidjson::SizeType i = 0; i < a.Size(); ++i)
      if (!same_json(a[i], b[i])) return false;
    return true;
  }
  return a == b;
}

// "" when the same, else where the two first differ.
std::string first_difference(const std::string& got, const std::string& want) {
  rapidjson::Document a, b;
  a.Parse<rapidjson::kParseFullPrecisionFlag>(got.c_str());
  b.Parse<rapidjson::kParseFullPrecisionFlag>(want.c_str());
  if (!a.HasParseError() && !b.HasParseError() && same_json(a, b)) return {};
  std::size_t i = 0;
  while (i < got.size() && i < want.size() && got[i] == want[i]) ++i;
  const std::size_t from = i > 80 ? i - 80 : 0;
  return "at " + std::to_string(i) + ":\n got  ..." + got.substr(from, 200) + "\n want ..." + want.substr(from, 200);
}

// The comparison: `usage --compare --since` the window's start (the window
// holds the newest row), none (no control session in the window), or not
// checked (rows after the window, which `usage --since` would count).
enum class Compared { Same, None, Unchecked };

// `exact`: to the byte (rows written in time order sum alike either way).
void check_same(const std::string& path, std::int64_t now_ms, std::int64_t window_ms, Compared compared,
                RunningStats* running = nullptr, bool exact = false, RowFeed* feed = nullptr) {
  DashboardStats stats(path);
  REQUIRE(stats.error().empty());
  std::string comparison;
  const std::string got = without_comparison(stats.json(now_ms, window_ms, kPrices, running, 50, feed), &comparison);
  const std::string want = reference(path, now_ms, window_ms);
  CHECK(first_difference(got, want) == "");
  if (exact) CHECK(got == want);
  if (compared == Compared::Same) {  // the same code on the same sums: to the byte
    CHECK(comparison != "null");
    CHECK(comparison == usage_compare(path, now_ms - window_ms));
  } else if (compared == Compared::None) {
    CHECK(comparison == "null");
  }
}

// Rows from..to of a mix: four models (two of them tied), sessions by key,
// by id or alone, two key fingerprints, every arm, statuses, outcomes,
// priced and not, and three rows answered out of order.
std::vector<LedgerRow> mixed_rows(int from, int to) {
  std::vector<LedgerRow> rows;
  const char* models[] = {"gpt-4o", "claude-x", "gemini-y", "m3"};
  for (int i = from; i < to; ++i) {
    LedgerRow r = td::test::sample_row(i, models[(i * 7) % 4]);
    r.session = "sess-" + std::to_string(i % 37);
    r.session_key = i % 3 ? "k" + std::to_string(i % 37) : "";
    if (i % 17 == 0) r.session = r.session_key = "";  // a row alone
    if (i % 13 == 0) r.key_fingerprint = "";
    if (i % 5 == 1) r.key_fingerprint = "fedcba9876543210";
    r.arm = i % 11 == 0 ? "shadow" : i % 19 == 0 ? "" : (i % 37) % 3 == 0 ? "control" : "treatment";
    r.status = i % 23 == 0 ? 429 : i % 29 == 0 ? 500 : i % 31 == 0 ? 0 : 200;
    r.recovery = i % 9 == 0 ? "retried" : i % 14 == 0 ? "no_fit" : "";
    if (i % 6 == 0) r.recalled = {"a" + std::to_string(i)};
    r.mode = i % 8 == 0 ? "survival" : r.mode;
    r.tokens_after = i % 10 == 0 ? r.tokens_before + 5 : r.tokens_after;  // grew: saved nothing
    r.input_cost_usd.reset();
    if (i % 4 != 3) r.input_cost_usd = 0.0009 + (i % 13) * 0.0001;
    r.usage_present = i % 15 != 0;
    // Equal groups (ties broken by name and model): two models of one size.
    if (r.model == "m3") r.tokens_before = 1000;
    // Rows answered out of order: their time is earlier than the row before.
    if (i == 100 || i == 250 || i == 400) r.time_ms -= 7'000;
    rows.push_back(std::move(r));
  }
  return rows;
}

void insert(const std::string& path, const std::vector<LedgerRow>& rows) {
  auto opened = LedgerStore::open(path, LedgerStore::Access::ReadWrite);
  REQUIRE(opened.store);
  REQUIRE(opened.store->insert(rows).empty());
}

}  // namespace

TEST_CASE("the stats' one pass gives the queries' answer, and usage --compare's comparison") {
  td::test::TempDir dir;
  const std::string path = dir.file("ledger.db");
  const std::vector<LedgerRow> rows = mixed_rows(0, 600);
  insert(path, rows);

  const std::int64_t first = rows.front().time_ms;
  SUBCASE("a window inside the rows, newer ones after it") {
    check_same(path, first + 450'000, 300'000, Compared::Unchecked);
  }
  SUBCASE("a window of the newest rows") { check_same(path, first + 700'000, 300'000, Compared::Same); }
  SUBCASE("a window holding every row") { check_same(path, first + 700'000, 365LL * 86'400'000, Compared::Same); }
  SUBCASE("a window with no row") { check_same(path, first - 10'000, 60'000, Compared::None); }
  SUBCASE("no control arm in the window") {
    // Rows 0 (a shadow row) and 1 (the treatment's).
    check_same(path, first + 1'000, 60'000, Compared::None);
  }
}

TEST_CASE("the sums are kept between answers: only the rows added since are read, and the figures are the same") {
  td::test::TempDir dir;
  const std::string path = dir.file("ledger.db");
  insert(path, mixed_rows(0, 400));
  const std::int64_t first = mixed_rows(0, 1).front().time_ms;
  RunningStats running;
  check_same(path, first + 500'000, 365LL * 86'400'000, Compared::Same, &running);
  CHECK_FALSE(running.resumed());
  CHECK(running.rows_read() == 400);

  SUBCASE("rows added by another writer, the window moved past none") {
    insert(path, mixed_rows(400, 600));
    check_same(path, first + 700'000, 365LL * 86'400'000, Compared::Same, &running);
    CHECK(running.resumed());
    CHECK(running.rows_read() == 200);
    check_same(path, first + 701'000, 365LL * 86'400'000, Compared::Same, &running);  // none new
    CHECK(running.resumed());
    CHECK(running.rows_read() == 0);
  }
  SUBCASE("the window moved past rows it held: its rows are read again, the totals go on") {
    insert(path, mixed_rows(400, 600));
    check_same(path, first + 700'000, 300'000, Compared::Same, &running);  // another window: made afresh
    check_same(path, first + 750'000, 300'000, Compared::Unchecked, &running);
    CHECK_FALSE(running.resumed());
    CHECK(running.rows_read() == 600 - 450);  // from the window's first row
  }
  SUBCASE("a row now inside the window that was after it") {
    check_same(path, first + 200'000, 100'000, Compared::Unchecked, &running);
    check_same(path, first + 300'000, 200'000, Compared::Unchecked, &running);
    CHECK_FALSE(running.resumed());
  }
  SUBCASE("rows deleted: every row read again") {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db, "DELETE FROM requests WHERE id % 10 = 3", nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(db);
    insert(path, mixed_rows(400, 450));
    check_same(path, first + 700'000, 365LL * 86'400'000, Compared::Same, &running);
    CHECK(running.rows_read() == 400 - 40 + 50);
  }
}

TEST_CASE("rows the writer committed are summed as handed over, the others read, the figures the same") {
  td::test::TempDir dir;
  const std::string path = dir.file("ledger.db");
  auto opened = Ledger::open(LedgerOptions{.path = path});
  REQUIRE(opened.ledger);
  Ledger& ledger = *opened.ledger;
  auto submit = [&](int from, int to) {
    for (LedgerRow& r : mixed_rows(from, to)) REQUIRE(ledger.submit(std::move(r)));
    REQUIRE(ledger.flush());
  };
  submit(0, 300);  // before any answer: the feed keeps nothing
  const std::int64_t first = mixed_rows(0, 1).front().time_ms;
  const std::int64_t year = 365LL * 86'400'000;
  RunningStats running;
  check_same(path, first + 500'000, year, Compared::Same, &running, false, ledger.feed().get());
  CHECK(running.rows_read() == 300);
  CHECK(running.rows_fed() == 0);

  SUBCASE("this writer's rows, another's between them") {
    submit(300, 400);
    insert(path, mixed_rows(400, 450));  // another process's rows
    submit(450, 600);
    check_same(path, first + 700'000, year, Compared::Same, &running, false, ledger.feed().get());
    CHECK(running.resumed());
    CHECK(running.rows_read() == 300);
    CHECK(running.rows_fed() == 250);
    // The window moved past rows it held: its rows read again, the new ones fed.
    submit(600, 650);
    check_same(path, first + 750'000, 300'000, Compared::Unchecked, &running, false, ledger.feed().get());
    CHECK(running.rows_fed() == 50);
  }
  SUBCASE("rows handed over under ids the table gives other rows are read from it instead") {
    RowFeed wrong;
    wrong.take();
    insert(path, mixed_rows(300, 400));
    const std::vector<LedgerRow> rows = mixed_rows(400, 500);
    wrong.committed(rows, 400);  // ids 301 to 400: the table's rows 301 to 400 are others
    check_same(path, first + 700'000, year, Compared::Same, &running, false, &wrong);
    CHECK(running.rows_read() == 100);
    CHECK(running.rows_fed() == 0);
  }
  SUBCASE("a page that stopped polling: nothing kept, every new row read") {
    RowFeed idle;  // never taken from
    insert(path, mixed_rows(300, 400));
    idle.committed(mixed_rows(300, 400), 400);
    CHECK(idle.take().empty());
    check_same(path, first + 700'000, year, Compared::Same, &running, false, &idle);
    CHECK(running.rows_read() == 100);
    CHECK(running.rows_fed() == 0);
  }
  SUBCASE("a feed at its bound keeps no more rows (read from the table instead)") {
    RowFeed full;
    full.take();
    const std::vector<LedgerRow> rows = mixed_rows(0, 1024);
    std::int64_t id = 0;
    for (std::size_t n = 0; n <= RowFeed::kMaxRows / rows.size(); ++n) full.committed(rows, id += 1024);
    std::size_t kept = 0;
    for (const FedChunk& c : full.take()) kept += c.rows.size();
    CHECK(kept == RowFeed::kMaxRows);
  }
}

TEST_CASE("an answer's now is read once its snapshot is taken: every row in it is in the window, the next resumes") {
  td::test::TempDir dir;
  const std::string path = dir.file("ledger.db");
  const auto wall = [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  const std::int64_t t = wall();
  std::vector<LedgerRow> rows = mixed_rows(0, 50);
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i].time_ms = t - 50 + static_cast<std::int64_t>(i);
  rows.back().time_ms = t + 2;  // started after a caller read its clock at t
  insert(path, rows);
  while (wall() <= t + 2) {
  }  // that start is past
  RunningStats running;
  rapidjson::Document d;
  d.Parse(DashboardStats(path).json(DashboardStats::kNow, 3'600'000, kPrices, &running).c_str());
  REQUIRE_FALSE(d.HasParseError());
  CHECK(d["now_ms"].GetInt64() > t + 2);
  CHECK(d["window_totals"]["requests"].GetInt64() == 50);
  DashboardStats(path).json(DashboardStats::kNow, 3'600'000, kPrices, &running);
  CHECK(running.resumed());
  CHECK(running.rows_read() == 0);
}

// Run by hand: TD_STATS_LEDGER=FILE unit_ledger -tc='the stats of a given*' --no-skip
TEST_CASE("the stats of a given ledger (TD_STATS_LEDGER) are the queries' answer" * doctest::skip()) {
  const char* path = std::getenv("TD_STATS_LEDGER");
  REQUIRE(path);
  check_same(path, 1'800'000'000'000, 365LL * 86'400'000, Compared::Same, nullptr, true);
}
