#include "ledger/dashboard_stats.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <chrono>
#include <initializer_list>
#include <string_view>

#include "ledger/arm_comparison.hpp"
#include "ledger/arm_comparison_json.hpp"
#include "ledger/dashboard_scan.hpp"
#include "ledger/sqlite_util.hpp"

namespace td::ledger {
namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

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

// A sum as SQLite's TOTAL() gives it and value() writes it: a whole number
// as an integer.
void number(Writer& w, double d) {
  if (d == static_cast<double>(static_cast<std::int64_t>(d)) && d < 9e15 && d > -9e15)
    w.Int64(static_cast<std::int64_t>(d));
  else
    w.Double(d);
}

// saved: what the diet took out of what went (a shadow or control row's
// tokens_after is what it sent, so it saved nothing), as /metrics counts it.
void sums(Writer& w, const StatsSums& s) {
  w.Key("requests");
  w.Int64(s.requests);
  for (auto [name, v] : {std::pair{"tokens_in", s.tokens_in},
                         {"tokens_sent", s.tokens_sent},
                         {"tokens_saved", s.tokens_saved},
                         {"prompt", s.prompt},
                         {"completion", s.completion},
                         {"cached_read", s.cached_read},
                         {"cache_write", s.cache_write},
                         {"input_cost_usd", s.input_cost_usd}}) {
    w.Key(name);
    number(w, v);
  }
  w.Key("unpriced");  // SUM(): NULL over no rows
  s.requests ? w.Int64(s.unpriced) : w.Null();
  w.Key("errors");
  number(w, s.errors);
  w.Key("fail_open");
  number(w, s.fail_open);
}

void groups(Writer& w, const char* key, const std::vector<StatsGroup>& gs) {
  w.Key(key);
  w.StartArray();
  for (const StatsGroup& g : gs) {
    w.StartObject();
    w.Key("name");
    w.String(g.name.c_str(), static_cast<rapidjson::SizeType>(g.name.size()));
    w.Key("model");
    w.String(g.model.c_str(), static_cast<rapidjson::SizeType>(g.model.size()));
    sums(w, g.sums);
    w.EndObject();
  }
  w.EndArray();
}

void counts(Writer& w, const char* key, const std::vector<std::pair<std::string, std::int64_t>>& cs) {
  w.Key(key);
  w.StartArray();
  for (const auto& [name, n] : cs) {
    w.StartObject();
    w.Key("name");
    w.String(name.c_str(), static_cast<rapidjson::SizeType>(name.size()));
    w.Key("requests");
    w.Int64(n);
    w.EndObject();
  }
  w.EndArray();
}

void arms(Writer& w, const std::map<std::string, ArmStats>& as) {
  w.Key("arms");
  w.StartArray();
  for (const auto& [name, a] : as) {
    w.StartObject();
    w.Key("name");
    w.String(name.c_str(), static_cast<rapidjson::SizeType>(name.size()));
    w.Key("requests");
    w.Int64(a.requests);
    w.Key("sessions");
    w.Int64(static_cast<std::int64_t>(a.sessions.size()));
    for (auto [key, v] : {std::pair{"input_cost_usd", a.input_cost_usd},
                          {"tokens_in", a.tokens_in},
                          {"tokens_sent", a.tokens_sent},
                          {"rereads", a.rereads},
                          {"recall_rounds", a.recall_rounds},
                          {"context_errors", a.context_errors},
                          {"rate_limited", a.rate_limited}}) {
      w.Key(key);
      number(w, v);
    }
    w.EndObject();
  }
  w.EndArray();
}

// The scan's figures, in the answer's order (docs/design.md §Dashboard).
void scanned(Writer& w, const StatsScan& s, std::int64_t bucket) {
  w.Key("totals");
  w.StartObject();
  sums(w, s.totals);
  w.EndObject();
  w.Key("window_totals");
  w.StartObject();
  sums(w, s.window);
  w.EndObject();
  w.Key("bucket_ms");
  w.Int64(bucket);
  w.Key("series");
  w.StartArray();
  for (const auto& [t, sum] : s.series) {
    w.StartObject();
    w.Key("t");
    w.Int64(t);
    sums(w, sum);
    w.EndObject();
  }
  w.EndArray();
  groups(w, "by_model", s.by_model);
  groups(w, "by_session", s.by_session);
  groups(w, "by_key", s.by_key);
  counts(w, "modes", s.modes);
  counts(w, "survival", s.survival);
  counts(w, "recovery", s.recovery);
  w.Key("waits");
  w.StartObject();
  w.Key("held");
  number(w, s.held);
  w.Key("wait_ms");
  number(w, s.wait_ms);
  w.Key("max_wait_ms");  // MAX(): NULL over no rows
  s.any_in_window ? w.Int64(s.max_wait_ms) : w.Null();
  w.EndObject();
  w.Key("recalls");
  w.StartObject();
  w.Key("requests_recalling");
  number(w, s.requests_recalling);
  w.Key("recall_rounds");
  number(w, s.recall_rounds);
  w.EndObject();
}

// The control arm against the treatment over the window's sessions, as
// `tokendiet usage --compare --json --since` the window's start gives it
// (the same code); null without a control session.
void comparison(Writer& w, const StatsScan& s, const PriceLookup& prices, std::int64_t since) {
  w.Key("comparison");
  // No control session: no bootstrap to run (the default, control_fraction 0).
  if (std::none_of(s.sessions.begin(), s.sessions.end(), [](const SessionSums& u) { return u.arm == "control"; })) {
    w.Null();
    return;
  }
  const ArmComparison c = compare_arms(s.sessions, prices);
  w.StartObject();
  w.Key("since_ms");
  w.Int64(since);
  write_comparison(w, c);
  w.EndObject();
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

std::string DashboardStats::json(std::int64_t now_ms, std::int64_t window_ms, const PriceLookup& prices,
                                 RunningStats* running, unsigned recent, RowFeed* feed) {
  if (db_) {
    // One read transaction: every figure of the answer from the same rows.
    sql::exec(db_, "BEGIN");
    // Its snapshot taken (by a first read) before the clock is read: a row
    // in it started before now, so it is in the window and the next answer
    // goes on from this one's sums (docs/design.md §Dashboard).
    if (now_ms == kNow) sql::exec(db_, "SELECT MAX(id) FROM requests");
  }
  if (now_ms == kNow)
    now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
                 .count();
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  w.Key("now_ms");
  w.Int64(now_ms);
  w.Key("window_ms");
  w.Int64(window_ms);
  std::string error = error_;
  if (db_) {
    const std::int64_t since = now_ms - window_ms;
    // 60 points over the window, whole seconds each.
    const std::int64_t bucket = std::max<std::int64_t>(1000, window_ms / 60 / 1000 * 1000);
    auto part = [&](const char* name, const std::string& sql, std::initializer_list<std::int64_t> params,
                    bool one = false) {
      w.Key(name);
      if (auto why = rows(db_, w, sql, params, one); !why.empty() && error.empty()) error = why;
    };
    RunningStats fresh;
    if (!running) running = &fresh;
    if (auto why = running->update(db_, path_, since, now_ms, bucket, feed); !why.empty()) error = why;
    const StatsScan scan = running->figures();
    scanned(w, scan, bucket);
    arms(w, scan.arms);
    comparison(w, scan, prices, since);
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
