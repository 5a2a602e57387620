// Timings, not tests: skipped unless run with --no-skip (scripts/bench/ledger.sh).
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "ledger/ledger.hpp"
#include "proxy/telemetry/metrics.hpp"
#include "rows.hpp"
#include "temp_dir.hpp"

using namespace td::proxy;
using namespace td::ledger;
using Clock = std::chrono::steady_clock;

namespace {
double ns_since(Clock::time_point t0, std::uint64_t n) {
  return std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / static_cast<double>(n);
}
}  // namespace

TEST_CASE("bench: ledger submit and writer throughput" * doctest::skip()) {
  td::test::TempDir tmp;
  constexpr int kRows = 200'000;
  std::vector<LedgerRow> rows;
  rows.reserve(kRows);
  for (int i = 0; i < kRows; ++i) rows.push_back(td::test::sample_row(i));

  auto opened = Ledger::open({.path = tmp.file("usage.db"), .queue_capacity = kRows});
  REQUIRE(opened.ledger);
  auto t0 = Clock::now();
  for (auto& r : rows) opened.ledger->submit(std::move(r));
  double submit_ns = ns_since(t0, kRows);
  opened.ledger->flush();
  double total_s = std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf(
      "ledger: submit %.0f ns/row (I/O-thread cost); %d rows committed in %.2f s = %.0f rows/s "
      "in %llu transactions; dropped %llu\n",
      submit_ns, kRows, total_s, kRows / total_s, static_cast<unsigned long long>(opened.ledger->transactions()),
      static_cast<unsigned long long>(opened.ledger->dropped()));
}

TEST_CASE("bench: metrics record and render" * doctest::skip()) {
  Metrics m;
  LedgerRow r = td::test::sample_row(1);
  constexpr int kN = 1'000'000;
  auto t0 = Clock::now();
  for (int i = 0; i < kN; ++i) m.record(r);
  double one = ns_since(t0, kN);
  std::vector<std::thread> threads;
  t0 = Clock::now();
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < kN / 2; ++i) m.record(r);
    });
  for (auto& th : threads) th.join();
  double two = ns_since(t0, kN);
  for (int i = 0; i < 255; ++i) {
    r.model = "model-" + std::to_string(i);
    m.record(r);
  }
  t0 = Clock::now();
  std::string page = m.render();
  double render_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  std::printf(
      "metrics: record %.0f ns (1 thread), %.0f ns wall/record (2 threads, same series); "
      "render of 256 models: %.1f ms, %zu KB\n",
      one, two, render_ms, page.size() / 1024);
}

TEST_CASE("bench: steady-state submit cost" * doctest::skip()) {
  // Rounds of 1000 rows with a flush between them, as a busy proxy would see:
  // the queue's memory is reused, so no page faults on fresh memory (which
  // dominate a single 200k-row burst in this sandbox).
  td::test::TempDir tmp;
  auto opened = Ledger::open({.path = tmp.file("usage.db")});
  REQUIRE(opened.ledger);
  constexpr int kRound = 1000, kRounds = 50;
  std::vector<LedgerRow> round;
  double ns = 0;
  for (int k = 0; k <= kRounds; ++k) {
    round.clear();
    for (int i = 0; i < kRound; ++i) round.push_back(td::test::sample_row(k * kRound + i));
    auto t0 = Clock::now();
    for (auto& r : round) opened.ledger->submit(std::move(r));
    if (k > 0) ns += std::chrono::duration<double, std::nano>(Clock::now() - t0).count();  // round 0 warms up
    opened.ledger->flush();
  }
  std::printf("ledger: steady-state submit %.0f ns/row\n", ns / (kRound * kRounds));
}

// The writer's cost per row against the rows per transaction: what a commit
// costs beside the inserts (the writer competes with the I/O threads for CPU).
TEST_CASE("bench: writer cost per row by transaction size" * doctest::skip()) {
  constexpr int kRows = 100'000;
  for (std::size_t commit : {16, 128, 1024, 8192}) {
    td::test::TempDir tmp;
    auto opened = Ledger::open({.path = tmp.file("usage.db"),
                                .queue_capacity = kRows,
                                .batch_rows = kRows,
                                .commit_rows = commit,
                                .start_writer = false});
    REQUIRE(opened.ledger);
    for (int i = 0; i < kRows; ++i) opened.ledger->submit(td::test::sample_row(i));
    auto t0 = Clock::now();
    opened.ledger->start();
    opened.ledger->flush();
    std::printf("ledger writer: %5zu rows/transaction: %.2f us/row\n", commit, ns_since(t0, kRows) / 1000);
  }
}
