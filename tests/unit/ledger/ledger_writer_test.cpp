#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "ledger/ledger.hpp"
#include "rows.hpp"
#include "temp_dir.hpp"

using namespace td::ledger;
using td::test::sample_row;
using td::test::TempDir;

namespace {

std::vector<LedgerRow> stored(const std::string& path) {
  auto ro = LedgerStore::open(path, LedgerStore::Access::ReadOnly);
  REQUIRE_MESSAGE(ro.store, ro.error);
  return ro.store->rows_since(0);
}

// Waits (bounded) for the writer to commit n rows by itself, without flush().
bool wait_written(const Ledger& ledger, std::uint64_t n) {
  for (int i = 0; i < 2000 && ledger.written() < n; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return ledger.written() >= n;
}

}  // namespace

TEST_CASE("submitted rows are committed by the writer thread, in order") {
  TempDir tmp;
  auto opened = Ledger::open({.path = tmp.file("usage.db")});
  REQUIRE_MESSAGE(opened.ledger, opened.error);
  std::vector<LedgerRow> rows;
  for (int i = 0; i < 20; ++i) {
    rows.push_back(sample_row(i));
    CHECK(opened.ledger->submit(rows.back()));
  }
  CHECK(opened.ledger->flush());
  CHECK(opened.ledger->written() == 20);
  CHECK(opened.ledger->dropped() == 0);
  CHECK(stored(tmp.file("usage.db")) == rows);
}

TEST_CASE("the writer thread runs at the background nice value it is given") {
  TempDir tmp;
  auto opened = Ledger::open({.path = tmp.file("usage.db"), .writer_nice = 7});
  REQUIRE_MESSAGE(opened.ledger, opened.error);
  REQUIRE(opened.ledger->submit(sample_row(1)));
  REQUIRE(opened.ledger->flush());  // the writer has run its first lines by now
  int writer_nice = -100;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    std::getline(comm, name);
    if (name != "td-ledger") continue;
    // /proc/<tid>/stat: "pid (comm) state ..."; nice is the 19th field.
    std::ifstream stat(task.path() / "stat");
    std::string line;
    std::getline(stat, line);
    std::istringstream rest(line.substr(line.rfind(')') + 2));
    std::string field;
    for (int i = 3; i <= 19 && rest >> field; ++i) {
    }
    writer_nice = std::stoi(field);
  }
  CHECK(writer_nice == 7);
}

TEST_CASE("rows queued while the writer is not running go in one transaction") {
  TempDir tmp;
  auto opened = Ledger::open({.path = tmp.file("usage.db"), .start_writer = false});
  REQUIRE(opened.ledger);
  Ledger& ledger = *opened.ledger;
  CHECK(ledger.flush());  // nothing queued: trivially flushed
  for (int i = 0; i < 50; ++i) REQUIRE(ledger.submit(sample_row(i)));
  CHECK_FALSE(ledger.flush());  // nobody to write yet: says so instead of hanging
  CHECK(ledger.queued() == 50);
  ledger.start();
  CHECK(ledger.flush());
  CHECK(ledger.written() == 50);
  CHECK(ledger.transactions() == 1);
  CHECK(ledger.queued() == 0);
}

TEST_CASE("a large batch is committed commit_rows at a time, every row once and in order") {
  // Short transactions keep each burst of writer CPU short (see ledger.hpp).
  TempDir tmp;
  auto opened = Ledger::open({.path = tmp.file("usage.db"), .commit_rows = 16, .start_writer = false});
  REQUIRE(opened.ledger);
  Ledger& ledger = *opened.ledger;
  std::vector<LedgerRow> rows;
  for (int i = 0; i < 50; ++i) {
    rows.push_back(sample_row(i));
    REQUIRE(ledger.submit(rows.back()));
  }
  ledger.start();
  CHECK(ledger.flush());
  CHECK(ledger.written() == 50);
  CHECK(ledger.transactions() == 4);  // 16 + 16 + 16 + 2
  CHECK(stored(tmp.file("usage.db")) == rows);
}

TEST_CASE("the writer commits on its own: after batch_rows, or after the flush interval") {
  TempDir tmp;
  SUBCASE("batch_rows reached, interval far away") {
    auto opened = Ledger::open({.path = tmp.file("a.db"), .batch_rows = 4, .flush_interval = std::chrono::hours(1)});
    REQUIRE(opened.ledger);
    for (int i = 0; i < 4; ++i) opened.ledger->submit(sample_row(i));
    CHECK(wait_written(*opened.ledger, 4));
  }
  SUBCASE("one row, short interval") {
    auto opened =
        Ledger::open({.path = tmp.file("b.db"), .batch_rows = 1000, .flush_interval = std::chrono::milliseconds(20)});
    REQUIRE(opened.ledger);
    opened.ledger->submit(sample_row(0));
    CHECK(wait_written(*opened.ledger, 1));
  }
}

TEST_CASE("the flush interval counts from the oldest queued row, not from the writer's wake-up") {
  // Rows that queued while the writer was busy (here: not started) have
  // waited already; they are committed at once, not a whole interval later
  // (which is what a kill -9 would lose: docs/design.md §Ledger and metrics).
  TempDir tmp;
  auto opened = Ledger::open({.path = tmp.file("usage.db"),
                              .batch_rows = 1000,
                              .flush_interval = std::chrono::milliseconds(400),
                              .start_writer = false});
  REQUIRE(opened.ledger);
  Ledger& ledger = *opened.ledger;
  ledger.submit(sample_row(0));
  std::this_thread::sleep_for(std::chrono::milliseconds(450));  // the row is past its deadline
  const auto started = std::chrono::steady_clock::now();
  ledger.start();
  REQUIRE(wait_written(ledger, 1));
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::milliseconds(200));
}

TEST_CASE("a full queue drops and counts instead of blocking") {
  TempDir tmp;
  auto opened = Ledger::open({.path = tmp.file("usage.db"), .queue_capacity = 8, .start_writer = false});
  REQUIRE(opened.ledger);
  Ledger& ledger = *opened.ledger;
  int accepted = 0;
  for (int i = 0; i < 30; ++i) accepted += ledger.submit(sample_row(i));
  CHECK(accepted == 8);
  CHECK(ledger.dropped() == 22);
  ledger.start();
  CHECK(ledger.flush());
  auto rows = stored(tmp.file("usage.db"));
  REQUIRE(rows.size() == 8);
  CHECK(rows.front().request_id == "req-0");  // the oldest are kept, the newest dropped
  CHECK(rows.back().request_id == "req-7");
  // Room again once the writer drained the queue.
  CHECK(ledger.submit(sample_row(99)));
}

TEST_CASE("close() commits what is queued; later rows are dropped and counted") {
  TempDir tmp;
  std::string path = tmp.file("usage.db");
  SUBCASE("writer running, long interval") {
    auto opened = Ledger::open({.path = path, .flush_interval = std::chrono::hours(1)});
    REQUIRE(opened.ledger);
    for (int i = 0; i < 10; ++i) opened.ledger->submit(sample_row(i));
    opened.ledger->close();
    CHECK(opened.ledger->written() == 10);
    CHECK_FALSE(opened.ledger->submit(sample_row(10)));
    CHECK(opened.ledger->dropped() == 1);
    opened.ledger->close();  // idempotent
  }
  SUBCASE("writer never started") {
    auto opened = Ledger::open({.path = path, .start_writer = false});
    REQUIRE(opened.ledger);
    for (int i = 0; i < 3; ++i) opened.ledger->submit(sample_row(i));
    opened.ledger.reset();  // destructor closes
  }
  CHECK_FALSE(stored(path).empty());
}

TEST_CASE("many I/O threads submitting at once: every row accounted for") {
  TempDir tmp;
  auto opened = Ledger::open({.path = tmp.file("usage.db"), .queue_capacity = 100'000});
  REQUIRE(opened.ledger);
  Ledger& ledger = *opened.ledger;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) ledger.submit(sample_row(t * 1000 + i));
    });
  for (auto& th : threads) th.join();
  CHECK(ledger.flush());
  CHECK(ledger.written() + ledger.dropped() == 2000);
  CHECK(ledger.dropped() == 0);
  CHECK(stored(tmp.file("usage.db")).size() == 2000);
}

TEST_CASE("calibration is saved by the writer and loaded back") {
  TempDir tmp;
  std::string path = tmp.file("usage.db");
  {
    auto opened = Ledger::open({.path = path});
    REQUIRE(opened.ledger);
    opened.ledger->save_calibration({{"m1", 1.5, 3}});
    opened.ledger->save_calibration({{"m1", 1.25, 4}, {"m2", 0.8, 1}});  // newest wins
    CHECK(opened.ledger->flush());
    std::vector<CalibrationEntry> want = {{"m1", 1.25, 4}, {"m2", 0.8, 1}};
    CHECK(opened.ledger->load_calibration() == want);
  }
  auto reopened = Ledger::open({.path = path, .start_writer = false});
  REQUIRE(reopened.ledger);
  CHECK(reopened.ledger->load_calibration().size() == 2);
}

TEST_CASE("open fails with a message when the file cannot be created") {
  TempDir tmp;
  auto opened = Ledger::open({.path = "/proc/definitely/not/here/usage.db"});
  CHECK_FALSE(opened.ledger);
  CHECK_FALSE(opened.error.empty());
}
