// The usage ledger as `serve` uses it: I/O threads hand rows to submit(),
// which never waits for the disk; one writer thread commits them to the
// LedgerStore in batched transactions.
//
// Why a bounded queue that drops: an I/O thread must never block on SQLite
// (a slow disk would stall every stream on that thread). When the writer
// falls behind by `queue_capacity` rows, new rows are dropped and counted
// (tokendiet_ledger_dropped_total) rather than growing memory without bound.
//
// Batching: the writer wakes on the first queued row and commits everything
// queued by `flush_interval` after the oldest queued row arrived (or as soon
// as `batch_rows` are queued), so a busy proxy does one fsync-free commit per
// batch of rows rather than per request. The deadline counts from the oldest
// row, not from the writer's wake-up: rows queued while the last batch was
// being committed have waited already. A committed row survives kill -9 (WAL):
// what a kill -9 loses is the rows of requests answered in the last
// flush_interval plus one commit (docs/design.md §Ledger and metrics).
//
// Short bursts: the writer shares the machine's cores with the I/O threads,
// and a request whose thread wakes on the writer's core waits for the
// writer's time slice to end. Hence short batches, and at most `commit_rows`
// per transaction with a yield between them when a burst of load queues more.
//
// Priority: the writer runs at the I/O threads' priority (writer_nice 0). A
// niced writer (it was nice 10, for throughput) is left waiting for a core
// whenever the machine is busy: its rows then waited tens of milliseconds
// (what a kill -9 loses), and at saturation it fell behind until the queue
// dropped rows. What each choice measured: docs/benchmarks.md §Usage ledger
// and scripts/bench/ledger/record-2026-11-24.md.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "ledger/ledger_row.hpp"
#include "ledger/ledger_store.hpp"

namespace td::ledger {

struct LedgerOptions {
  std::string path;
  std::size_t queue_capacity = 65'536;
  std::size_t batch_rows = 1024;  // wake the writer early once this many are queued
  std::size_t commit_rows = 128;   // rows per transaction: bounds one burst of writer CPU
  std::chrono::milliseconds flush_interval{5};  // the oldest row's wait for its commit to start
  int writer_nice = 0;       // the writer thread's nice value (see above)
  bool start_writer = true;  // false: rows queue up until start() (tests, staged startup)
  // Where the writer says what it could not write (called on its thread);
  // serve passes its log. Unset: said nowhere, still counted.
  std::function<void(std::string_view message)> report_error = nullptr;
};

class Ledger {
 public:
  struct Opened {
    std::unique_ptr<Ledger> ledger;  // null on error
    std::string error;
  };

  // Opens (creating if needed) the SQLite file on the calling thread, so a
  // bad path fails `serve` at startup, then starts the writer thread.
  static Opened open(const LedgerOptions& options);

  ~Ledger();  // close()
  Ledger(const Ledger&) = delete;
  Ledger& operator=(const Ledger&) = delete;

  // Queues a row for the writer. Never blocks on I/O (one short mutex
  // hold); false when the row was dropped (queue full or ledger closed).
  bool submit(LedgerRow row) noexcept;

  // Starts the writer thread if options.start_writer was false.
  void start();

  // Waits until every row submitted before the call is committed (or failed
  // and counted). For tests and shutdown paths; never call it on an I/O
  // thread. Returns false if the writer is not running.
  bool flush();

  // Commits everything still queued, then stops the writer. Idempotent;
  // later submit() calls drop.
  void close();

  // The latest per-model calibration; the writer saves it with its next
  // batch (the newest call wins if several come before that).
  void save_calibration(std::vector<CalibrationEntry> entries);
  // Read at startup, before the writer has anything to do.
  std::vector<CalibrationEntry> load_calibration();

  // A recap a model wrote (or "" for a summarizer that failed), stored with
  // the writer's next batch; the file keeps the newest `kRecapSummariesKept`.
  // Never blocks on I/O.
  static constexpr std::size_t kRecapSummariesKept = 2048;
  void save_recap_summary(RecapSummaryRow row);
  // The newest kRecapSummariesKept, oldest first; read at startup.
  std::vector<RecapSummaryRow> load_recap_summaries();

  std::uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  std::uint64_t written() const { return written_.load(std::memory_order_relaxed); }
  std::uint64_t write_errors() const { return write_errors_.load(std::memory_order_relaxed); }
  std::uint64_t transactions() const { return transactions_.load(std::memory_order_relaxed); }
  std::size_t queued() const;
  const std::string& path() const { return options_.path; }

 private:
  Ledger(LedgerOptions options, std::unique_ptr<LedgerStore> store);
  void run();
  // What the writer takes besides rows: the calibration, the recap summaries.
  struct State {
    std::vector<CalibrationEntry> calibration;
    std::vector<RecapSummaryRow> summaries;
  };
  bool state_pending() const { return calibration_pending_ || !summaries_.empty(); }  // under mu_
  State take_state();                                                                 // under mu_
  template <typename Read>
  auto read_store(Read read);  // read(LedgerStore&) on a connection no other thread uses
  void write(std::vector<LedgerRow>& batch, State& state);
  void report(const std::string& message) const {
    if (options_.report_error) options_.report_error(message);
  }

  LedgerOptions options_;
  std::unique_ptr<LedgerStore> store_;  // touched by the writer thread only once it runs

  mutable std::mutex mu_;
  std::condition_variable wake_;   // writer: rows queued, flush asked, or stop
  std::condition_variable done_;   // flush(): a batch was committed
  std::vector<LedgerRow> queue_;
  std::chrono::steady_clock::time_point oldest_;  // when queue_ last became non-empty
  std::vector<CalibrationEntry> calibration_;
  bool calibration_pending_ = false;
  std::vector<RecapSummaryRow> summaries_;
  std::uint64_t accepted_ = 0;   // rows ever queued
  std::uint64_t processed_ = 0;  // rows ever committed or failed
  bool flush_asked_ = false;
  bool stopping_ = false;
  bool closed_ = false;
  bool writer_done_ = false;  // everything accepted has been processed for good
  std::thread writer_;

  std::atomic<std::uint64_t> dropped_{0}, written_{0}, write_errors_{0}, transactions_{0};
};

}  // namespace td::ledger
