#include "ledger/dashboard_stats.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <initializer_list>
#include <string_view>

#include "ledger/sqlite_util.hpp"

namespace td::ledger {
namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

// saved: what the diet took out of what went (a shadow or control row's
// tokens_after is what it sent, so it saved nothing), as /metrics counts it.
constexpr std::string_view kSums =
    "COUNT(*) AS requests, TOTAL(tokens_before) AS tokens_in, TOTAL(tokens_after) AS tokens_sent, "
    "TOTAL(MAX(tokens_before - tokens_after, 0)) AS tokens_saved, TOTAL(prompt_tokens) AS prompt, "
    "TOTAL(completion_tokens) AS completion, TOTAL(cached_read_tokens) AS cached_read, "
    "TOTAL(cache_write_tokens) AS cache_write, TOTAL(input_cost_usd) AS input_cost_usd, "
    "SUM(input_cost_usd IS NULL AND usage_present) AS unpriced, "
    "TOTAL(status = 0 OR status >= 400) AS errors, TOTAL(fail_open) AS fail_open";

// One value of the current row, typed as SQLite holds it (TOTAL() is a
// REAL even for integers: a whole number is written as one).
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
    default: {
      const std::string t = sql::text(s, col);
      w.String(t.data(), static_cast<rapidjson::SizeType>(t.size()));
    }
  }
}

// Runs `sql` with its integer parameters bound in order; writes each row as
// an object named by its columns, into an array (or the first row alone
// when `one`). "" on success, else SQLite's reason.
std::string rows(sqlite3* db, Writer& w, const std::string& sql, std::initializer_list<std::int64_t> params,
                 bool one = false) {
  sql::Stmt st(db, sql.c_str());
  if (!st) {
    one ? w.Null() : (w.StartArray(), w.EndArray());
    return sql::errmsg(db, "stats query");
  }
  int i = 1;
  for (std::int64_t p : params) sqlite3_bind_int64(st.get(), i++, p);
  if (!one) w.StartArray();
  int rc;
  bool any = false;
  while ((rc = sqlite3_step(st.get())) == SQLITE_ROW) {
    any = true;
    w.StartObject();
    for (int c = 0; c < sqlite3_column_count(st.get()); ++c) {
      w.Key(sqlite3_column_name(st.get(), c));
      value(w, st.get(), c);
    }
    w.EndObject();
    if (one) break;
  }
  if (one && !any) w.Null();
  if (!one) w.EndArray();
  return rc == SQLITE_ROW || rc == SQLITE_DONE ? std::string() : sql::errmsg(db, "stats query");
}

// Rows of one grouping over the window, the biggest first (ties by name and
// model: SQLite's order of equal rows is its own, and the page's rows should
// not swap between polls).
std::string group_sql(std::string_view key, std::string_view where, unsigned limit) {
  return "SELECT " + std::string(key) + " AS name, model, " + std::string(kSums) +
         " FROM requests WHERE time_ms >= ?1 AND time_ms <= ?2" + std::string(where) + " GROUP BY " + std::string(key) +
         ", model ORDER BY tokens_in DESC, name, model LIMIT " + std::to_string(limit);
}

}  // namespace

DashboardStats::DashboardStats(const std::string& path) : path_(path) {
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
    error_ = sql::errmsg(db_, ("cannot open ledger " + path).c_str());
    sqlite3_close(db_);
    db_ = nullptr;
    return;
  }
  sqlite3_busy_timeout(db_, 1000);
}

DashboardStats::~DashboardStats() { sqlite3_close(db_); }

bool DashboardStats::has_column(const char* name) {
  sql::Stmt st(db_, "SELECT 1 FROM pragma_table_info('requests') WHERE name = ?1");
  if (!st) return false;
  sqlite3_bind_text(st.get(), 1, name, -1, SQLITE_STATIC);
  return sqlite3_step(st.get()) == SQLITE_ROW;
}

std::string DashboardStats::json(std::int64_t now_ms, std::int64_t window_ms, unsigned recent) {
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  w.Key("now_ms");
  w.Int64(now_ms);
  w.Key("window_ms");
  w.Int64(window_ms);
  std::string error = error_;
  if (db_) {
    // One read transaction: every figure of the answer from the same rows.
    sql::exec(db_, "BEGIN");
    const std::int64_t since = now_ms - window_ms;
    // 60 points over the window, whole seconds each.
    const std::int64_t bucket = std::max<std::int64_t>(1000, window_ms / 60 / 1000 * 1000);
    auto part = [&](const char* name, const std::string& sql, std::initializer_list<std::int64_t> params,
                    bool one = false) {
      w.Key(name);
      if (auto why = rows(db_, w, sql, params, one); !why.empty() && error.empty()) error = why;
    };
    part("totals", "SELECT " + std::string(kSums) + " FROM requests", {}, true);
    part("window_totals", "SELECT " + std::string(kSums) + " FROM requests WHERE time_ms >= ?1 AND time_ms <= ?2",
         {since, now_ms}, true);
    w.Key("bucket_ms");
    w.Int64(bucket);
    part("series",
         "SELECT time_ms / ?3 * ?3 AS t, " + std::string(kSums) +
             " FROM requests WHERE time_ms >= ?1 AND time_ms <= ?2 GROUP BY t ORDER BY t",
         {since, now_ms, bucket});
    part("by_model", group_sql("model", "", 50), {since, now_ms});
    part("by_session", group_sql("session", " AND session != ''", 20), {since, now_ms});
    part("by_key", group_sql("key_fingerprint", " AND key_fingerprint != ''", 20), {since, now_ms});
    part("modes",
         "SELECT mode AS name, COUNT(*) AS requests FROM requests WHERE time_ms >= ?1 AND time_ms <= ?2 "
         "GROUP BY mode ORDER BY requests DESC, name",
         {since, now_ms});
    part("survival",
         "SELECT survival AS name, COUNT(*) AS requests FROM requests WHERE time_ms >= ?1 AND time_ms <= ?2 "
         "AND survival != '' GROUP BY survival ORDER BY requests DESC, name",
         {since, now_ms});
    part("recovery",
         "SELECT recovery AS name, COUNT(*) AS requests FROM requests WHERE time_ms >= ?1 AND time_ms <= ?2 "
         "AND recovery != '' GROUP BY recovery ORDER BY requests DESC, name",
         {since, now_ms});
    part("waits",
         "SELECT TOTAL(wait_ms > 0) AS held, TOTAL(wait_ms) AS wait_ms, MAX(wait_ms) AS max_wait_ms "
         "FROM requests WHERE time_ms >= ?1 AND time_ms <= ?2",
         {since, now_ms}, true);
    const bool outcomes = has_column("recall_rounds");
    part("recalls",
         std::string("SELECT TOTAL(recalled != '') AS requests_recalling, ") +
             (outcomes ? "TOTAL(recall_rounds)" : "0") +
             " AS recall_rounds FROM requests WHERE time_ms >= ?1 AND time_ms <= ?2",
         {since, now_ms}, true);
    // Each quota group's runway as its newest request left it (SQLite gives
    // the bare columns of the row MAX() picked).
    part("runways",
         "SELECT quota_group AS name, runway_tokens, MAX(time_ms) AS time_ms FROM requests "
         "WHERE time_ms >= ?1 AND time_ms <= ?2 AND quota_group != '' GROUP BY quota_group",
         {since, now_ms});
    // The arms' sums, when the ledger has them (schema 7); `tokendiet usage
    // --compare` gives their intervals.
    if (has_column("arm"))
      part("arms",
           "SELECT arm AS name, COUNT(*) AS requests, COUNT(DISTINCT CASE WHEN session_key != '' THEN session_key "
           "WHEN session != '' THEN session END) AS sessions, TOTAL(input_cost_usd) AS input_cost_usd, "
           "TOTAL(tokens_before) AS tokens_in, TOTAL(tokens_after) AS tokens_sent, TOTAL(rereads) AS rereads, "
           "TOTAL(recall_rounds) AS recall_rounds, TOTAL(context_errors) AS context_errors, "
           "TOTAL(status = 429) AS rate_limited FROM requests WHERE time_ms >= ?1 AND time_ms <= ?2 AND arm != '' "
           "GROUP BY arm ORDER BY arm",
           {since, now_ms});
    else {
      w.Key("arms");
      w.StartArray();
      w.EndArray();
    }
    part("recent",
         std::string("SELECT time_ms, request_id, session, key_fingerprint, model, profile, mode, ") +
             (has_column("arm") ? "arm" : "''") +
             " AS arm, status, tokens_before, tokens_after, strategies, fail_open, survival, recovery, wait_ms, "
             "recalled != '' AS recalled, total_ms FROM requests ORDER BY id DESC LIMIT ?1",
         {static_cast<std::int64_t>(recent)});
    sql::exec(db_, "COMMIT");
  }
  w.Key("error");
  if (error.empty())
    w.Null();
  else
    w.String(error.c_str(), static_cast<rapidjson::SizeType>(error.size()));
  w.EndObject();
  return {buf.GetString(), buf.GetSize()};
}

}  // namespace td::ledger
