// The usage ledger as `serve` uses it (docs/design.md §Ledger and metrics):
// I/O threads hand rows to submit(), which never waits for the disk (a full
// queue drops and counts the row); one writer thread, at the I/O threads'
// priority, commits them to the LedgerStore in short batched transactions
// (at most `commit_rows` each, with a yield between them), each started by
// `flush_interval` after its oldest row was queued. Why each constant is
// what it is: the records that section links.
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
#include "ledger/row_feed.hpp"

namespace td::ledger {

struct LedgerOptions {
  std::string path;
  std::size_t queue_capacity = 65'536;
  std::size_t batch_rows = 1024;                // wake the writer early once this many are queued
  std::size_t commit_rows = 128;                // rows per transaction: bounds one burst of writer CPU
  std::chrono::milliseconds flush_interval{5};  // the oldest row's wait for its commit to start
  int writer_nice = 0;                          // the writer thread's nice value (see above)
  bool start_writer = true;                     // false: rows queue up until start() (tests, staged startup)
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
  // The rows committed, for the dashboard while a page polls (row_feed.hpp).
  std::shared_ptr<RowFeed> feed() const { return feed_; }

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
  const std::shared_ptr<RowFeed> feed_ = std::make_shared<RowFeed>();

  mutable std::mutex mu_;
  std::condition_variable wake_;  // writer: rows queued, flush asked, or stop
  std::condition_variable done_;  // flush(): a batch was committed
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
