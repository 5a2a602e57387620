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
  std::vector<StatsGroup> top(std::size_t limit) const {
    std::vector<const StatsGroup*> order;
    order.reserve(groups.size());
    for (const StatsGroup& g : groups) order.push_back(&g);
    const std::size_t n = std::min(limit, order.size());
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n), order.end(),
                      [](const StatsGroup* a, const StatsGroup* b) {
                        if (a->sums.tokens_in != b->sums.tokens_in) return a->sums.tokens_in > b->sums.tokens_in;
                        return std::tie(a->name, a->model) < std::tie(b->name, b->model);
                      });
    std::vector<StatsGroup> out;
    for (std::size_t i = 0; i < n; ++i) out.push_back(*order[i]);
    return out;
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
  ArmStats* arm;                                    // null: no arm
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

// The window's sums: made afresh when the window moved past a row it holds.
struct Window {
  std::int64_t since = 0, now = 0, bucket = 0;
  StatsScan out;  // the figures but the totals, groupings, outcomes and sessions
  Grouping by_model, by_session, by_key;
  Counts modes, survival, recovery;
  SessionTally sessions;
  std::unordered_map<std::string, Slot> slots;
  std::string key, slot_key, last_slot_key;
  Slot* last_slot = nullptr;  // the previous row's: a session's rows often come in a row
  StatsSums* bucket_sums = nullptr;
  std::int64_t bucket_t = 0;

  // Adds the row if it is in the window; `q`: the statement its columns
  // past the sessions' are read from (null: `r` holds them).
  void add(Row& r, sqlite3_stmt* q);
};

struct RunningStats::State {
  std::string path;
  bool valid = false, resumed = false;
  std::int64_t last_id = -1, rows = 0, read = 0, fed_read = 0;  // rows: the table's rows up to last_id
  std::int64_t newest_ms = INT64_MIN;                           // the latest time of those rows
  StatsSums totals;
  Window window;
  std::vector<FedChunk> fed;  // rows the writer committed after this answer's snapshot
};

// The columns Window::add() reads.
std::string row_columns(sqlite3* db) {
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
  return session_columns(col) + ", time_ms, tokens_before, tokens_after, completion_tokens, fail_open, " +
         col("wait_ms") + ", key_fingerprint, mode, survival, recovery, recalled != ''";
}

Row read_row(sqlite3_stmt* q) {
  Row r;
  r.s = session_row(q, 0);
  int c = 14;
  for (std::int64_t* v : {&r.time_ms, &r.tokens_before, &r.tokens_after, &r.completion, &r.fail_open, &r.wait_ms})
    *v = sqlite3_column_int64(q, c++);
  return r;
}

// The row the writer handed over, as read_row() and Window::add() read it
// from the table; its views live as long as `f`.
Row fed_row(const FedRow& f) {
  Row r;
  r.s.id = f.id;
  r.s.session_key = f.session_key;
  r.s.session = f.session;
  r.s.model = f.model;
  r.s.arm = f.arm;
  r.s.cost = f.cost;
  r.s.usage_present = f.usage_present;
  r.s.prompt = f.prompt;
  r.s.cached_read = f.cached_read;
  r.s.cache_write = f.cache_write;
  r.s.rereads = f.rereads;
  r.s.recall_rounds = f.recall_rounds;
  r.s.context_errors = f.context_errors;
  r.s.status = f.status;
  r.time_ms = f.time_ms;
  r.tokens_before = f.tokens_before;
  r.tokens_after = f.tokens_after;
  r.completion = f.completion;
  r.fail_open = f.fail_open;
  r.wait_ms = f.wait_ms;
  r.key_fingerprint = f.key_fingerprint;
  r.mode = f.mode;
  r.survival = f.survival;
  r.recovery = f.recovery;
  r.recalled = f.recalled;
  return r;
}

void Window::add(Row& r, sqlite3_stmt* q) {
  if (r.time_ms < since || r.time_ms > now) return;
  if (q) {
    int c = 20;
    r.key_fingerprint = text(q, c++);
    r.mode = text(q, c++);
    r.survival = text(q, c++);
    r.recovery = text(q, c++);
    r.recalled = sqlite3_column_int64(q, c++) != 0;
  }
  out.any_in_window = true;
  ledger::add(out.window, r);
  const std::int64_t t = r.time_ms / bucket * bucket;
  if (!bucket_sums || t != bucket_t) bucket_sums = &out.series[bucket_t = t];
  ledger::add(*bucket_sums, r);
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
  const bool same = last_slot && slot_key == last_slot_key;
  auto [it, added] = same ? std::pair{slots.end(), false} : slots.try_emplace(slot_key);
  Slot& slot = same ? *last_slot : it->second;
  if (!same) {
    last_slot = &slot;
    last_slot_key.swap(slot_key);
  }
  if (added) {
    slot.by_model = by_model.at(key, r.s.model, r.s.model);
    slot.by_session = r.s.session.empty() ? kNone : by_session.at(key, r.s.session, r.s.model);
    slot.by_key = r.key_fingerprint.empty() ? kNone : by_key.at(key, r.key_fingerprint, r.s.model);
    slot.tally = alone ? kNone : sessions.find(r.s);
    slot.arm = r.s.arm.empty() ? nullptr : &out.arms[std::string(r.s.arm)];
    if (slot.arm && !alone) slot.arm->sessions.emplace(!r.s.session_key.empty() ? r.s.session_key : r.s.session);
  }
  ledger::add(by_model.groups[slot.by_model].sums, r);
  if (slot.by_session != kNone) ledger::add(by_session.groups[slot.by_session].sums, r);
  if (slot.by_key != kNone) ledger::add(by_key.groups[slot.by_key].sums, r);
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
  if (slot.arm) {
    ArmStats& a = *slot.arm;
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

RunningStats::RunningStats() : state_(std::make_unique<State>()) {}
RunningStats::~RunningStats() = default;
RunningStats::RunningStats(RunningStats&&) noexcept = default;
RunningStats& RunningStats::operator=(RunningStats&&) noexcept = default;

std::int64_t RunningStats::rows_read() const { return state_->read; }
std::int64_t RunningStats::rows_fed() const { return state_->fed_read; }
bool RunningStats::resumed() const { return state_->resumed; }

std::string RunningStats::update(sqlite3* db, const std::string& path, std::int64_t since_ms, std::int64_t now_ms,
                                 std::int64_t bucket_ms, RowFeed* feed) {
  sql::Stmt count(db, "SELECT COUNT(*) FROM requests");
  sql::Stmt newest(db, "SELECT MAX(id) FROM requests");
  sql::Stmt row_at(db, "SELECT time_ms, request_id FROM requests WHERE id = ?1");
  // Whether a row read before has its time in [from, to] (the time index).
  sql::Stmt read_in(db, "SELECT 1 FROM requests WHERE time_ms >= ?1 AND time_ms <= ?2 AND id <= ?3 LIMIT 1");
  // The first row in the window.
  sql::Stmt first_in(db, "SELECT MIN(id) FROM requests WHERE time_ms >= ?1 AND time_ms <= ?2");
  const std::string columns = row_columns(db);
  // Rows in id order from ?1 to ?2: a sum resumed is a sum made afresh.
  sql::Stmt rows(db, ("SELECT " + columns + " FROM requests WHERE id >= ?1 AND id <= ?2 ORDER BY id").c_str());
  if (!count || !newest || !row_at || !read_in || !first_in || !rows) return sql::errmsg(db, "stats query");
  auto any_read = [&](std::int64_t from, std::int64_t to) {
    sqlite3_reset(read_in.get());
    sqlite3_bind_int64(read_in.get(), 1, from);
    sqlite3_bind_int64(read_in.get(), 2, to);
    sqlite3_bind_int64(read_in.get(), 3, state_->last_id);
    return sqlite3_step(read_in.get()) != SQLITE_DONE;
  };
  // Adds a row; `totals`: it is new, add it to the totals too.
  auto add_row = [&](Row& r, sqlite3_stmt* q, bool totals) {
    State& s = *state_;
    if (totals) {
      add(s.totals, r);
      s.last_id = r.s.id;
      s.newest_ms = std::max(s.newest_ms, r.time_ms);
      ++s.rows;
    }
    s.window.add(r, q);
    ++s.read;
    s.fed_read += q == nullptr;
  };
  // Reads rows from..to.
  auto read = [&](std::int64_t from, std::int64_t to, bool totals) {
    sqlite3_reset(rows.get());
    sqlite3_bind_int64(rows.get(), 1, from);
    sqlite3_bind_int64(rows.get(), 2, to);
    int rc;
    while ((rc = sqlite3_step(rows.get())) == SQLITE_ROW) {
      Row r = read_row(rows.get());
      add_row(r, rows.get(), totals);
    }
    return rc == SQLITE_DONE;
  };
  // Whether the table holds `f` under its id (the writer's ids checked).
  auto holds = [&](const FedRow& f) {
    sqlite3_reset(row_at.get());
    sqlite3_bind_int64(row_at.get(), 1, f.id);
    return sqlite3_step(row_at.get()) == SQLITE_ROW && sqlite3_column_int64(row_at.get(), 0) == f.time_ms &&
           request_id_hash(text(row_at.get(), 1)) == f.request_id;
  };
  // The new rows: those the writer handed over as they are, in runs of
  // consecutive ids each checked at both ends, the others (another
  // process's, or not kept) read from the table, all in id order.
  auto read_new = [&]() {
    State& s = *state_;
    if (feed) {
      std::vector<FedChunk> taken = feed->take();
      s.fed.insert(s.fed.end(), std::make_move_iterator(taken.begin()), std::make_move_iterator(taken.end()));
    }
    std::vector<const FedRow*> fed;
    for (const FedChunk& c : s.fed)
      for (const FedRow& f : c.rows) fed.push_back(&f);
    sqlite3_reset(newest.get());
    std::int64_t top = -1;  // the snapshot's newest row
    if (sqlite3_step(newest.get()) != SQLITE_ROW) return false;
    if (sqlite3_column_type(newest.get(), 0) != SQLITE_NULL) top = sqlite3_column_int64(newest.get(), 0);
    std::size_t i = 0;
    bool wrong = false;
    while (i < fed.size() && fed[i]->id <= top) {
      if (fed[i]->id <= s.last_id) {
        ++i;
        continue;
      }
      std::size_t end = i + 1;
      while (end < fed.size() && fed[end]->id == fed[end - 1]->id + 1 && fed[end]->id <= top) ++end;
      if ((wrong = !holds(*fed[i]) || !holds(*fed[end - 1]))) break;  // not the table's rows: read them
      if (fed[i]->id > s.last_id + 1 && !read(s.last_id + 1, fed[i]->id - 1, true)) return false;
      for (; i < end; ++i) {
        Row r = fed_row(*fed[i]);
        add_row(r, nullptr, true);
      }
    }
    if (!read(s.last_id + 1, INT64_MAX, true)) return false;
    // Chunks read keep no row for later answers.
    std::erase_if(s.fed, [&](const FedChunk& c) { return wrong || c.rows.empty() || c.rows.back().id <= s.last_id; });
    return true;
  };
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (attempt > 0 || !state_->valid || state_->path != path) {
      *state_ = State{};
      state_->path = path;
    }
    State& s = *state_;
    const Window& w = s.window;
    // The window's sums go on while it moved forward past no row read.
    bool resume = s.valid && w.bucket == bucket_ms && since_ms >= w.since && now_ms >= w.now;
    if (resume && since_ms > w.since) resume = !any_read(w.since, since_ms - 1);  // rows leaving
    // Rows arriving: none read is later than the window's end (no query), or none in what it gains.
    if (resume && now_ms > w.now && s.newest_ms > w.now) resume = !any_read(w.now + 1, now_ms);
    s.resumed = resume;
    s.valid = false;
    s.read = s.fed_read = 0;
    if (!resume) s.window = Window{.bucket = bucket_ms};
    s.window.since = since_ms;
    s.window.now = now_ms;
    bool ok = true;
    if (!resume && s.last_id >= 0) {  // the window's rows read before, again
      sqlite3_reset(first_in.get());
      sqlite3_bind_int64(first_in.get(), 1, since_ms);
      sqlite3_bind_int64(first_in.get(), 2, now_ms);
      if (sqlite3_step(first_in.get()) == SQLITE_ROW && sqlite3_column_type(first_in.get(), 0) != SQLITE_NULL)
        ok = read(sqlite3_column_int64(first_in.get(), 0), s.last_id, false);
    }
    ok = ok && read_new();
    if (!ok) {
      *state_ = State{};
      return sql::errmsg(db, "stats query");
    }
    // A row read before and deleted since: read every row again.
    sqlite3_reset(count.get());
    if (sqlite3_step(count.get()) == SQLITE_ROW && sqlite3_column_int64(count.get(), 0) == s.rows) {
      s.valid = true;
      return {};
    }
  }
  return {};
}

StatsScan RunningStats::figures() const {
  const Window& w = state_->window;
  StatsScan out = w.out;
  out.totals = state_->totals;
  out.by_model = w.by_model.top(50);
  out.by_session = w.by_session.top(20);
  out.by_key = w.by_key.top(20);
  out.modes = most_first(w.modes);
  out.survival = most_first(w.survival);
  out.recovery = most_first(w.recovery);
  out.sessions = w.sessions.sorted();
  return out;
}

}  // namespace td::ledger
