#include "ledger/ledger_store.hpp"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iterator>
#include <string>
#include <string_view>

#include "ledger/sqlite_util.hpp"

namespace td::ledger {
using namespace sql;
namespace {

constexpr const char* kCreateV1 = R"sql(
CREATE TABLE requests (
  id                 INTEGER PRIMARY KEY,
  time_ms            INTEGER NOT NULL,
  request_id         TEXT    NOT NULL DEFAULT '',
  session            TEXT    NOT NULL DEFAULT '',
  key_fingerprint    TEXT    NOT NULL DEFAULT '',
  provider           TEXT    NOT NULL DEFAULT '',
  model              TEXT    NOT NULL DEFAULT '',
  profile            TEXT    NOT NULL DEFAULT '',
  mode               TEXT    NOT NULL DEFAULT '',
  tokens_before      INTEGER NOT NULL DEFAULT 0,
  tokens_after       INTEGER NOT NULL DEFAULT 0,
  prompt_tokens      INTEGER NOT NULL DEFAULT 0,
  completion_tokens  INTEGER NOT NULL DEFAULT 0,
  cached_read_tokens INTEGER NOT NULL DEFAULT 0,
  cache_write_tokens INTEGER NOT NULL DEFAULT 0,
  reasoning_tokens   INTEGER NOT NULL DEFAULT 0,
  usage_present      INTEGER NOT NULL DEFAULT 0,
  status             INTEGER NOT NULL DEFAULT 0,
  ttfb_ms            INTEGER NOT NULL DEFAULT 0,
  total_ms           INTEGER NOT NULL DEFAULT 0,
  stream             INTEGER NOT NULL DEFAULT 0,
  strategies         TEXT    NOT NULL DEFAULT '',
  fail_open          INTEGER NOT NULL DEFAULT 0,
  bytes_in           INTEGER NOT NULL DEFAULT 0,
  bytes_out          INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX requests_time ON requests (time_ms);
CREATE TABLE calibration (
  model      TEXT PRIMARY KEY,
  ratio      REAL    NOT NULL,
  samples    INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL
);
)sql";

constexpr const char* kColumns =
    "time_ms, request_id, session, key_fingerprint, provider, model, profile, mode, "
    "tokens_before, tokens_after, prompt_tokens, completion_tokens, cached_read_tokens, "
    "cache_write_tokens, reasoning_tokens, usage_present, status, ttfb_ms, total_ms, stream, "
    "strategies, fail_open, bytes_in, bytes_out, recovery, evicted_tasks, recalled, "
    "survival, wait_ms, quota_group, runway_tokens, arm, session_key, tokens_diet, rereads, recall_rounds, "
    "context_errors, input_cost_usd";
constexpr int kColumnCount = 38;

// The columns each schema version after 1 added: migrate() adds them in
// order, with the value the rows before get (`fill`), and rows_since() reads
// that value for those an older file (opened read-only, so not migrated) lacks.
//   2: context-overflow recovery's outcome ("retried", "no_fit"; "" none);
//   3: the tasks semantic eviction took outputs of (docs/design.md §The
//      archive), their titles joined by newlines;
//   4: the archive entries the model read back with tokendiet_recall
//      (docs/design.md §Recall), their ids joined by newlines;
//   6: survival's report (docs/design.md §Policy): its outcome ("" none), the
//      time the request was held for the runway, the runway's quota group and
//      the tokens it had left after the request (NULL: not known);
//   7: the control arm and the outcome fields (docs/design.md §Ledger and
//      metrics): the arm ('' for the rows before: the comparison reads them
//      as the treatment), the session key that picked it, the tokens the diet would have sent (NULL before:
//      read as tokens_after), re-reads, recall rounds, context-length errors
//      and the input as billed, priced (NULL: no price known).
struct AddedColumn {
  int version;
  const char* name;
  const char* type;  // as ALTER TABLE ADD COLUMN takes it
  const char* fill;  // what a row written before the column reads as
};
constexpr const char* kText = "TEXT NOT NULL DEFAULT ''";
constexpr const char* kInteger = "INTEGER NOT NULL DEFAULT 0";
constexpr AddedColumn kAddedColumns[] = {{2, "recovery", kText, "''"},
                                         {3, "evicted_tasks", kText, "''"},
                                         {4, "recalled", kText, "''"},
                                         {6, "survival", kText, "''"},
                                         {6, "wait_ms", kInteger, "0"},
                                         {6, "quota_group", kText, "''"},
                                         {6, "runway_tokens", "INTEGER", "NULL"},
                                         {7, "arm", kText, "''"},
                                         {7, "session_key", kText, "''"},
                                         {7, "tokens_diet", "INTEGER", "NULL"},
                                         {7, "rereads", kInteger, "0"},
                                         {7, "recall_rounds", kInteger, "0"},
                                         {7, "context_errors", kInteger, "0"},
                                         {7, "input_cost_usd", "REAL", "NULL"}};

// The tables each later schema version added.
//   5: the recaps a model wrote (ledger_state.cpp), so a restart renders
//      them again rather than asking the model anew.
struct AddedTable {
  int version;
  const char* sql;
};
constexpr AddedTable kAddedTables[] = {{5, R"sql(
CREATE TABLE recap_summaries (
  seq        INTEGER PRIMARY KEY,
  key        INTEGER NOT NULL UNIQUE,
  text       TEXT    NOT NULL,
  created_ms INTEGER NOT NULL
);
)sql"}};
// Each version after 1 adds columns or a table.
constexpr bool every_version_adds_something() {
  for (int v = 2; v <= kLedgerSchemaVersion; ++v) {
    bool adds = false;
    for (const AddedColumn& c : kAddedColumns) adds = adds || c.version == v;
    for (const AddedTable& t : kAddedTables) adds = adds || t.version == v;
    if (!adds) return false;
  }
  return true;
}
static_assert(every_version_adds_something());

// A list column: the items joined by `sep` (strategies: ','; task titles and
// entry ids, which may hold commas: '\n').
std::string join(const std::vector<std::string>& items, char sep = ',') {
  std::string out;
  for (const auto& n : items) {
    if (!out.empty()) out += sep;
    out += n;
  }
  return out;
}

std::vector<std::string> split(const std::string& s, char sep = ',') {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < s.size()) {
    size_t at = s.find(sep, start);
    if (at == std::string::npos) at = s.size();
    out.push_back(s.substr(start, at - start));
    start = at + 1;
  }
  return out;
}

// Where column `name` stands in a column list: as a whole name ("wait_ms",
// never inside another).
std::size_t column_at(const std::string& columns, std::string_view name) {
  for (std::size_t at = columns.find(name); at != std::string::npos; at = columns.find(name, at + 1)) {
    const bool starts = at == 0 || columns[at - 1] == ' ';
    const std::size_t end = at + name.size();
    if (starts && (end == columns.size() || columns[end] == ',')) return at;
  }
  return std::string::npos;
}

std::string parent_dir(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {};
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// Creates the file with mode 0600 if it is missing, so the WAL and -shm
// files SQLite derives from it are private too (they copy its mode).
std::string create_private_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return "cannot create " + path + ": " + std::strerror(errno);
  ::close(fd);
  return {};
}

}  // namespace

std::string make_private_dirs(const std::string& dir) {
  if (dir.empty()) return {};
  std::string sofar;
  size_t pos = 0;
  while (pos <= dir.size()) {
    size_t slash = dir.find('/', pos);
    if (slash == std::string::npos) slash = dir.size();
    sofar = dir.substr(0, slash);
    pos = slash + 1;
    if (sofar.empty() || sofar == "." || sofar == "..") continue;
    if (::mkdir(sofar.c_str(), 0700) != 0 && errno != EEXIST)
      return "cannot create directory " + sofar + ": " + std::strerror(errno);
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return dir + " is not a directory";
  return {};
}

LedgerStore::Opened LedgerStore::open(const std::string& path, Access access) {
  if (path.empty()) return {nullptr, "no ledger path"};
  int flags = SQLITE_OPEN_NOMUTEX;  // one thread per connection, by design
  if (access == Access::ReadWrite) {
    if (auto why = make_private_dirs(parent_dir(path)); !why.empty()) return {nullptr, why};
    if (auto why = create_private_file(path); !why.empty()) return {nullptr, why};
    flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  } else {
    if (::access(path.c_str(), R_OK) != 0) return {nullptr, "no ledger at " + path + ": " + std::strerror(errno)};
    flags |= SQLITE_OPEN_READONLY;
  }
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, flags, nullptr) != SQLITE_OK) {
    std::string why = errmsg(db, ("cannot open ledger " + path).c_str());
    sqlite3_close(db);
    return {nullptr, why};
  }
  std::unique_ptr<LedgerStore> store(new LedgerStore(db, path));
  // A concurrent reader (tokendiet usage) or a second replica's writer holds
  // a lock only briefly; wait for it rather than fail.
  sqlite3_busy_timeout(db, 5000);
  if (access == Access::ReadWrite) {
    for (const char* pragma : {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL"})
      if (auto why = exec(db, pragma); !why.empty()) return {nullptr, "ledger " + path + ": " + pragma + ": " + why};
    if (auto why = store->migrate(); !why.empty()) return {nullptr, "ledger " + path + ": " + why};
  } else {
    int v = store->schema_version();
    if (v < 0) return {nullptr, "ledger " + path + ": " + sqlite3_errmsg(db)};
    if (v == 0) return {nullptr, path + " is not a tokendiet ledger (empty schema)"};
    if (v > kLedgerSchemaVersion)
      return {nullptr, "ledger " + path + " has schema version " + std::to_string(v) + ", newer than this tokendiet (" +
                           std::to_string(kLedgerSchemaVersion) + ")"};
  }
  return {std::move(store), {}};
}

LedgerStore::~LedgerStore() {
  for (sqlite3_stmt* s : insert_) sqlite3_finalize(s);
  sqlite3_close(db_);
}

int LedgerStore::schema_version() {
  Stmt s(db_, "PRAGMA user_version");
  if (!s || sqlite3_step(s.get()) != SQLITE_ROW) return -1;
  return sqlite3_column_int(s.get(), 0);
}

// Brings the file to kLedgerSchemaVersion, one step per version, each in its
// own transaction with the user_version bump, so a crash mid-way leaves a
// consistent older version that the next start continues from.
std::string LedgerStore::migrate() {
  if (auto why = exec(db_, "BEGIN IMMEDIATE"); !why.empty()) return why;
  int v = schema_version();
  std::string why;
  if (v < 0) {
    why = sqlite3_errmsg(db_);
  } else if (v > kLedgerSchemaVersion) {
    why = "schema version " + std::to_string(v) + " is newer than this tokendiet (" +
          std::to_string(kLedgerSchemaVersion) + ")";
  } else {
    if (v == 0) {
      why = exec(db_, kCreateV1);
      if (why.empty()) why = exec(db_, "PRAGMA user_version = 1");
      v = 1;
    }
    for (int next = v + 1; why.empty() && next <= kLedgerSchemaVersion; v = next++) {
      for (const AddedColumn& c : kAddedColumns)
        if (c.version == next && why.empty())
          why = exec(db_, ("ALTER TABLE requests ADD COLUMN " + std::string(c.name) + " " + c.type).c_str());
      for (const AddedTable& t : kAddedTables)
        if (t.version == next) why = exec(db_, t.sql);
      if (why.empty()) why = exec(db_, ("PRAGMA user_version = " + std::to_string(next)).c_str());
    }
  }
  if (!why.empty()) {
    exec(db_, "ROLLBACK");
    return why;
  }
  return exec(db_, "COMMIT");
}

sqlite3_stmt* LedgerStore::insert_statement(unsigned k) {
  if (!insert_[k]) {
    std::string row = "(?";
    for (int i = 1; i < kColumnCount; ++i) row += ",?";
    row += ")";
    std::string sql = std::string("INSERT INTO requests (") + kColumns + ") VALUES " + row;
    for (std::size_t i = 1; i < (std::size_t{1} << k); ++i) sql += "," + row;
    sqlite3_prepare_v3(db_, sql.c_str(), -1, SQLITE_PREPARE_PERSISTENT, &insert_[k], nullptr);
  }
  return insert_[k];
}

namespace {

// A row's joined texts, held until its statement has run (the text is
// bound, not copied).
struct JoinedTexts {
  std::string strategies, evicted_tasks, recalled;
};

// Binds `r` to the parameters after `i`.
void bind_row(sqlite3_stmt* s, int& i, const LedgerRow& r, JoinedTexts& joined) {
  joined.strategies = join(r.strategies);
  joined.evicted_tasks = join(r.evicted_tasks, '\n');
  joined.recalled = join(r.recalled, '\n');
  const std::string& strategies = joined.strategies;
  sqlite3_bind_int64(s, ++i, r.time_ms);
  bind_text(s, ++i, r.request_id);
  bind_text(s, ++i, r.session);
  bind_text(s, ++i, r.key_fingerprint);
  bind_text(s, ++i, r.provider);
  bind_text(s, ++i, r.model);
  bind_text(s, ++i, r.profile);
  bind_text(s, ++i, r.mode);
  for (std::int64_t v : {r.tokens_before, r.tokens_after, r.prompt_tokens, r.completion_tokens, r.cached_read_tokens,
                         r.cache_write_tokens, r.reasoning_tokens})
    sqlite3_bind_int64(s, ++i, v);
  sqlite3_bind_int(s, ++i, r.usage_present);
  sqlite3_bind_int(s, ++i, r.status);
  sqlite3_bind_int64(s, ++i, r.ttfb_ms);
  sqlite3_bind_int64(s, ++i, r.total_ms);
  sqlite3_bind_int(s, ++i, r.stream);
  bind_text(s, ++i, strategies);
  sqlite3_bind_int(s, ++i, r.fail_open);
  sqlite3_bind_int64(s, ++i, r.bytes_in);
  sqlite3_bind_int64(s, ++i, r.bytes_out);
  bind_text(s, ++i, r.recovery);
  bind_text(s, ++i, joined.evicted_tasks);
  bind_text(s, ++i, joined.recalled);
  bind_text(s, ++i, r.survival);
  sqlite3_bind_int64(s, ++i, r.wait_ms);
  bind_text(s, ++i, r.quota_group);
  if (r.runway_tokens)
    sqlite3_bind_int64(s, ++i, *r.runway_tokens);
  else
    sqlite3_bind_null(s, ++i);
  bind_text(s, ++i, r.arm);
  bind_text(s, ++i, r.session_key);
  sqlite3_bind_int64(s, ++i, r.tokens_diet);
  sqlite3_bind_int64(s, ++i, r.rereads);
  sqlite3_bind_int64(s, ++i, r.recall_rounds);
  sqlite3_bind_int64(s, ++i, r.context_errors);
  if (r.input_cost_usd)
    sqlite3_bind_double(s, ++i, *r.input_cost_usd);
  else
    sqlite3_bind_null(s, ++i);
}

}  // namespace

std::string LedgerStore::insert(std::span<const LedgerRow> rows) {
  if (rows.empty()) return {};
  if (auto why = exec(db_, "BEGIN IMMEDIATE"); !why.empty()) return "begin: " + why;
  JoinedTexts joined[std::size_t{1} << kMaxInsertLog2];
  while (!rows.empty()) {
    // The largest block that fits: rows keep their order (and ids).
    unsigned k = kMaxInsertLog2;
    while ((std::size_t{1} << k) > rows.size()) --k;
    const std::size_t n = std::size_t{1} << k;
    sqlite3_stmt* s = insert_statement(k);
    if (!s) {
      std::string why = errmsg(db_, "prepare insert");
      exec(db_, "ROLLBACK");
      return why;
    }
    int i = 0;
    for (std::size_t r = 0; r < n; ++r) bind_row(s, i, rows[r], joined[r]);
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);  // no pointer into `joined` outlives this block
    if (rc != SQLITE_DONE) {
      std::string why = errmsg(db_, "insert");
      exec(db_, "ROLLBACK");
      return why;
    }
    rows = rows.subspan(n);
  }
  if (auto why = exec(db_, "COMMIT"); !why.empty()) {
    exec(db_, "ROLLBACK");
    return "commit: " + why;
  }
  return {};
}

std::int64_t LedgerStore::last_insert_id() const { return sqlite3_last_insert_rowid(db_); }

std::vector<LedgerRow> LedgerStore::rows_since(std::int64_t since_ms, std::int64_t limit) {
  std::string columns = kColumns;
  // Older files (opened read-only, so not migrated) lack the later columns.
  const int version = schema_version();
  for (const AddedColumn& c : kAddedColumns)
    if (version < c.version) columns.replace(column_at(columns, c.name), std::string_view(c.name).size(), c.fill);
  std::string sql = "SELECT " + columns + " FROM requests WHERE time_ms >= ? ORDER BY time_ms, id LIMIT ?";
  Stmt s(db_, sql.c_str());
  std::vector<LedgerRow> rows;
  if (!s) return rows;
  sqlite3_bind_int64(s.get(), 1, since_ms);
  sqlite3_bind_int64(s.get(), 2, limit);
  while (sqlite3_step(s.get()) == SQLITE_ROW) {
    sqlite3_stmt* q = s.get();
    LedgerRow r;
    int c = 0;
    r.time_ms = sqlite3_column_int64(q, c++);
    r.request_id = text(q, c++);
    r.session = text(q, c++);
    r.key_fingerprint = text(q, c++);
    r.provider = text(q, c++);
    r.model = text(q, c++);
    r.profile = text(q, c++);
    r.mode = text(q, c++);
    for (std::int64_t* v : {&r.tokens_before, &r.tokens_after, &r.prompt_tokens, &r.completion_tokens,
                            &r.cached_read_tokens, &r.cache_write_tokens, &r.reasoning_tokens})
      *v = sqlite3_column_int64(q, c++);
    r.usage_present = sqlite3_column_int(q, c++) != 0;
    r.status = sqlite3_column_int(q, c++);
    r.ttfb_ms = sqlite3_column_int64(q, c++);
    r.total_ms = sqlite3_column_int64(q, c++);
    r.stream = sqlite3_column_int(q, c++) != 0;
    r.strategies = split(text(q, c++));
    r.fail_open = sqlite3_column_int(q, c++) != 0;
    r.bytes_in = sqlite3_column_int64(q, c++);
    r.bytes_out = sqlite3_column_int64(q, c++);
    r.recovery = text(q, c++);
    r.evicted_tasks = split(text(q, c++), '\n');
    r.recalled = split(text(q, c++), '\n');
    r.survival = text(q, c++);
    r.wait_ms = sqlite3_column_int64(q, c++);
    r.quota_group = text(q, c++);
    if (sqlite3_column_type(q, c) != SQLITE_NULL) r.runway_tokens = sqlite3_column_int64(q, c);
    ++c;
    r.arm = text(q, c++);
    r.session_key = text(q, c++);
    r.tokens_diet = sqlite3_column_type(q, c) == SQLITE_NULL ? r.tokens_after : sqlite3_column_int64(q, c);
    ++c;
    r.rereads = static_cast<std::uint32_t>(sqlite3_column_int64(q, c++));
    r.recall_rounds = static_cast<std::uint32_t>(sqlite3_column_int64(q, c++));
    r.context_errors = static_cast<std::uint32_t>(sqlite3_column_int64(q, c++));
    if (sqlite3_column_type(q, c) != SQLITE_NULL) r.input_cost_usd = sqlite3_column_double(q, c);
    ++c;
    rows.push_back(std::move(r));
  }
  return rows;
}

std::string LedgerStore::readable_column(std::string_view name) {
  const int version = schema_version();
  for (const AddedColumn& c : kAddedColumns)
    if (c.name == name && version < c.version) return std::string(c.fill);
  return std::string(name);
}

}  // namespace td::ledger
