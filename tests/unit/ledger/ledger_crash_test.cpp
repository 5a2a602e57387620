// Rows committed before a kill -9 are still there afterwards, and the file is
// intact: the guarantee WAL mode with synchronous=NORMAL gives across a
// process crash. The child keeps writing when it is killed, so the kill lands
// in the middle of the writer's work.
#include <doctest/doctest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "ledger/ledger.hpp"
#include "rows.hpp"
#include "temp_dir.hpp"

using namespace td::ledger;
using td::test::sample_row;
using td::test::TempDir;

namespace {

[[noreturn]] void child(const std::string& path, int out_fd) {
  auto opened = Ledger::open({.path = path, .batch_rows = 64, .flush_interval = std::chrono::milliseconds(5)});
  if (!opened.ledger) _exit(3);
  Ledger& ledger = *opened.ledger;
  for (int i = 0; i < 100; ++i) ledger.submit(sample_row(i));
  if (!ledger.flush() || ledger.written() != 100) _exit(4);
  // Committed: tell the parent, and keep writing until it kills us.
  bool told = false;
  for (int i = 100; i < 2'000'000; ++i) {
    ledger.submit(sample_row(i));
    if (!told && ledger.written() >= 300) {
      told = write(out_fd, "B", 1) == 1;
    }
    if (i % 50 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  _exit(5);  // never reached in practice: the parent kills far sooner
}

std::string integrity(const std::string& path) {
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_stmt* s = nullptr;
  std::string out = "prepare failed";
  if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &s, nullptr) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
    out = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
  sqlite3_finalize(s);
  sqlite3_close(db);
  return out;
}

}  // namespace

TEST_CASE("committed rows survive SIGKILL of the writing process") {
  TempDir tmp;
  std::string path = tmp.file("usage.db");
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    child(path, fds[1]);
  }
  close(fds[1]);
  char c = 0;
  ssize_t n = read(fds[0], &c, 1);  // EOF (0) if the child died early
  close(fds[0]);
  // Let it write on for a moment so the kill lands mid-batch, not at a pause.
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  REQUIRE(kill(pid, SIGKILL) == 0);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE_MESSAGE(n == 1, "child exited early with status " << WEXITSTATUS(status));
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);

  // The -wal file holds the recent commits; opening replays it.
  CHECK(integrity(path) == "ok");
  auto ro = LedgerStore::open(path, LedgerStore::Access::ReadWrite);
  REQUIRE_MESSAGE(ro.store, ro.error);
  auto rows = ro.store->rows_since(0);
  REQUIRE(rows.size() >= 300);
  std::size_t intact = 0;  // complete, in order, no holes
  while (intact < rows.size() && rows[intact] == sample_row(static_cast<int>(intact))) ++intact;
  CHECK(intact == rows.size());
  MESSAGE(rows.size() << " rows survived the kill");
}
