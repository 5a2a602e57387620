#include "ledger/dashboard_scan.hpp"

#include <algorithm>
#include <tuple>

#include "ledger/sqlite_util.hpp"

namespace td::ledger {
namespace {

// A grouping: its groups in the order first seen, found by a key made of
// name and model.
struct Grouping {
  std::unordered_map<std::string, std::size_t> index;
  std::vector<StatsGroup> groups;
  std::size_t at(std::string& key, std::string_view name, std::string_view model) {
    key.assign(name).append(1, '\0').append(model);
    auto [it, added] = index.try_emplace(key, groups.size());
    if (added) groups.push_back(StatsGroup{std::string(name), std::string(model), {}});
    return it->second;
  }
  std::vector<StatsGroup> top(std::size_t limit) {
    std::sort(groups.begin(), groups.end(), [](const StatsGroup& a, const StatsGroup& b) {
      if (a.sums.tokens_in != b.sums.tokens_in) return a.sums.tokens_in > b.sums.tokens_in;
      return std::tie(a.name, a.model) < std::tie(b.name, b.model);
    });
    if (groups.size() > limit) groups.resize(limit);
    return std::move(groups);
  }
};

// A mode's, survival's or recovery's names are a handful: a list is faster
// to search than a hash.
using Counts = std::vector<std::pair<std::string, std::int64_t>>;

Counts most_first(Counts counts) {
  std::sort(counts.begin(), counts.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  return counts;
}

void count(Counts& counts, std::string_view name) {
  for (auto& [n, c] : counts)
    if (n == name) {
      ++c;
      return;
    }
  counts.emplace_back(std::string(name), 1);
}

// What a row's session, model, arm and key fingerprint sum into, found by
// one lookup per row: a session's rows share them.
struct Slot {
  std::size_t by_model, by_session, by_key, tally;  // kNone: none
};
constexpr std::size_t kNone = SessionTally::kNone;

// The columns one row gives the sums beside its SessionRow.
struct Row {
  SessionRow s;
  std::int64_t time_ms, tokens_before, tokens_after, completion, fail_open, wait_ms;
  std::string_view key_fingerprint, mode, survival, recovery;
  bool recalled;
};

void add(StatsSums& s, const Row& r) {
  ++s.requests;
  s.tokens_in += r.tokens_before;
  s.tokens_sent += r.tokens_after;
  s.tokens_saved += std::max<std::int64_t>(r.tokens_before - r.tokens_after, 0);
  s.prompt += r.s.prompt;
  s.completion += r.completion;
  s.cached_read += r.s.cached_read;
  s.cache_write += r.s.cache_write;
  if (r.s.cost)
    s.input_cost_usd += *r.s.cost;
  else
    s.unpriced += r.s.usage_present;
  s.errors += r.s.status == 0 || r.s.status >= 400;
  s.fail_open += r.fail_open;
}

std::string_view text(sqlite3_stmt* s, int col) {
  const unsigned char* t = sqlite3_column_text(s, col);
  return t ? std::string_view(reinterpret_cast<const char*>(t), static_cast<std::size_t>(sqlite3_column_bytes(s, col)))
           : std::string_view();
}

}  // namespace

std::string scan_stats(sqlite3* db, std::int64_t since_ms, std::int64_t now_ms, std::int64_t bucket_ms,
                       StatsScan& out) {
  // A column a file from before it lacks reads as what its migration gives
  // the rows before.
  auto col = [db](std::string_view name) -> std::string {
    sql::Stmt st(db, "SELECT 1 FROM pragma_table_info('requests') WHERE name = ?1");
    if (st) {
      sqlite3_bind_text(st.get(), 1, name.data(), static_cast<int>(name.size()), SQLITE_STATIC);
      if (sqlite3_step(st.get()) == SQLITE_ROW) return std::string(name);
    }
    return name == "input_cost_usd" ? "NULL" : name == "arm" || name == "session_key" ? "''" : "0";
  };
  const std::string sql = "SELECT " + session_columns(col) +
                          ", time_ms, tokens_before, tokens_after, completion_tokens, fail_open, " + col("wait_ms") +
                          ", key_fingerprint, mode, survival, recovery, recalled != '' FROM requests";
  sql::Stmt st(db, sql.c_str());
  if (!st) return sql::errmsg(db, "stats query");
  Grouping by_model, by_session, by_key;
  Counts modes, survival, recovery;
  SessionTally sessions;
  std::unordered_map<std::string, Slot> slots;
  std::string key, slot_key;
  StatsSums* bucket = nullptr;
  std::int64_t bucket_t = 0;
  int rc;
  while ((rc = sqlite3_step(st.get())) == SQLITE_ROW) {
    sqlite3_stmt* q = st.get();
    Row r;
    r.s = session_row(q, 0);
    int c = 14;
    for (std::int64_t* v : {&r.time_ms, &r.tokens_before, &r.tokens_after, &r.completion, &r.fail_open, &r.wait_ms})
      *v = sqlite3_column_int64(q, c++);
    add(out.totals, r);
    if (r.time_ms < since_ms || r.time_ms > now_ms) continue;
    r.key_fingerprint = text(q, c++);
    r.mode = text(q, c++);
    r.survival = text(q, c++);
    r.recovery = text(q, c++);
    r.recalled = sqlite3_column_int64(q, c++) != 0;
    out.any_in_window = true;
    add(out.window, r);
    const std::int64_t t = r.time_ms / bucket_ms * bucket_ms;
    if (!bucket || t != bucket_t) bucket = &out.series[bucket_t = t];
    add(*bucket, r);
    // A row alone (no session key or id) is a session of its own.
    const bool alone = r.s.session_key.empty() && r.s.session.empty();
    slot_key.assign(r.s.session_key)
        .append(1, '\0')
        .append(r.s.session)
        .append(1, '\0')
        .append(r.s.model)
        .append(1, '\0')
        .append(r.s.arm)
        .append(1, '\0')
        .append(r.key_fingerprint);
    auto [it, added] = slots.try_emplace(slot_key);
    Slot& slot = it->second;
    if (added) {
      slot.by_model = by_model.at(key, r.s.model, r.s.model);
      slot.by_session = r.s.session.empty() ? kNone : by_session.at(key, r.s.session, r.s.model);
      slot.by_key = r.key_fingerprint.empty() ? kNone : by_key.at(key, r.key_fingerprint, r.s.model);
      slot.tally = alone ? kNone : sessions.find(r.s);
      if (!r.s.arm.empty() && !alone)
        out.arms[std::string(r.s.arm)].sessions.emplace(!r.s.session_key.empty() ? r.s.session_key : r.s.session);
    }
    add(by_model.groups[slot.by_model].sums, r);
    if (slot.by_session != kNone) add(by_session.groups[slot.by_session].sums, r);
    if (slot.by_key != kNone) add(by_key.groups[slot.by_key].sums, r);
    if (alone)
      sessions.add(r.s);
    else if (slot.tally != kNone)
      sessions.add(slot.tally, r.s);
    count(modes, r.mode);
    if (!r.survival.empty()) count(survival, r.survival);
    if (!r.recovery.empty()) count(recovery, r.recovery);
    out.held += r.wait_ms > 0;
    out.wait_ms += r.wait_ms;
    out.max_wait_ms = std::max(out.max_wait_ms, r.wait_ms);
    out.requests_recalling += r.recalled;
    out.recall_rounds += r.s.recall_rounds;
    if (!r.s.arm.empty()) {
      ArmStats& a = out.arms[std::string(r.s.arm)];
      ++a.requests;
      if (r.s.cost) a.input_cost_usd += *r.s.cost;
      a.tokens_in += r.tokens_before;
      a.tokens_sent += r.tokens_after;
      a.rereads += r.s.rereads;
      a.recall_rounds += r.s.recall_rounds;
      a.context_errors += r.s.context_errors;
      a.rate_limited += r.s.status == 429;
    }
  }
  out.by_model = by_model.top(50);
  out.by_session = by_session.top(20);
  out.by_key = by_key.top(20);
  out.modes = most_first(std::move(modes));
  out.survival = most_first(std::move(survival));
  out.recovery = most_first(std::move(recovery));
  out.sessions = sessions.take();
  return rc == SQLITE_DONE ? std::string() : sql::errmsg(db, "stats query");
}

}  // namespace td::ledger
