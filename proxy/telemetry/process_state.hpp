// The process-wide state of `serve`: the /metrics registry, the usage ledger,
// the token estimator's per-model calibration and the recaps a model wrote
// (both persisted in the ledger file) and the diet's caches. They outlive config reloads (a SIGHUP rebuilds the
// filters, not the counters or the caches), so they live here rather than in
// any filter.
//
// Startup:  process_state().open_ledger(config)   before accepting connections;
//                                             also restores the calibration and
//                                             the recap summaries, and sends new
//                                             summaries to the ledger
// /metrics: process_state().metrics().render()    (Content-Type Metrics::kContentType)
// Counting: tok::counter_for_model(model, &process_state().calibration()), and
//           calibration().observe(model, raw_estimate, billed_prompt) when
//           the upstream's usage is known
// Diet:     process_state().diet_caches()          handed to the diet filter, with
//           process_state().diet_workers(n)        the threads big bodies are dieted on;
//           process_state().body_budget()          the bytes of big bodies in flight
// Policy:   process_state().runways(), sessions()  the TPM runway per key and quota
//                                             group, and each session's memory;
//           process_state().open_shared_state(config)  before serving: with a
//                                             quota_store, shared_store() the Redis store
//                                             every replica shares (null: none)
// Archive:  process_state().open_archive(config)  before serving; archive() the
//                                             store (null: disabled), archive_thread()
//                                             where its files are read and written
// Shutdown: process_state().close_ledger()        after the last request's logging
//                                             phase; saves the calibration
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "archive/store.hpp"
#include "ledger/ledger.hpp"
#include "diet/diet_caches.hpp"
#include "proxy/telemetry/body_budget.hpp"
#include "proxy/telemetry/metrics.hpp"
#include "proxy/telemetry/work_pool.hpp"
#include "pruning/tokenizer/calibration.hpp"
#include "quota/runway_store.hpp"
#include "quota/session_store.hpp"
#include "shared_state/shared_store.hpp"

namespace td::config {
struct Config;
}

namespace td::proxy {

// The plans ahead (proxy/filters/plan_ahead_filter.hpp): computed on their
// thread, and left to their request (the thread had its most waiting, or
// the bytes could not be read again).
struct PlanAheadCounts {
  std::atomic<std::uint64_t> computed{0};
  std::atomic<std::uint64_t> left{0};
};

class ProcessState {
 public:
  ProcessState();  // registers the ledger's counters with the metrics
  ProcessState(const ProcessState&) = delete;
  ProcessState& operator=(const ProcessState&) = delete;

  Metrics& metrics() { return metrics_; }

  // The open ledger, or null (disabled, not opened yet, or failed to open).
  ledger::Ledger* ledger() const { return ledger_ptr_.load(std::memory_order_acquire); }

  // Opens the ledger config.ledger describes (path resolved by
  // config::ledger_file, queue_size), unless ledger.enabled is false. Call
  // once, before serving. "" on success (or when disabled), else why not.
  // Later calls are no-ops: the ledger file is fixed for the process's life.
  std::string open_ledger(const config::Config& config);

  // Commits every queued row and the calibration, and stops the writer.
  // Rows submitted later are dropped (and counted).
  void close_ledger();

  // The estimator's calibration, shared by every request of the process.
  tok::Calibration& calibration() { return calibration_; }

  // The diet's caches, shared by every request of the process.
  diet::DietCaches& diet_caches() { return diet_caches_; }

  // The policy's state (quota/): it outlives reloads, as the limits it
  // learnt from the providers' headers still hold.
  quota::RunwayStore& runways() { return runways_; }
  quota::SessionStore& sessions() { return sessions_; }
  // The store shared with the other replicas (config.quota_store), started:
  // it connects in the background and falls back to runways() and
  // sessions() while Redis does not answer. Call once, before serving;
  // later calls are no-ops (the connection is the process's).
  void open_shared_state(const config::Config& config);
  shared_state::SharedStore* shared_store() const { return shared_ptr_.load(std::memory_order_acquire); }

  // The diet threads (work_pool.hpp), started by the first call with
  // diet_thread_count(configured) threads; later calls get the same pool
  // (its size changes with a restart, as `threads` does).
  WorkPool& diet_workers(unsigned configured);
  // The bytes of big request bodies in flight (body_budget.hpp).
  BodyBudget& body_budget() { return body_budget_; }

  // Opens the archive (archive/store.hpp) under config::archive_dir(), unless
  // archive.enabled is false. Call once, before serving; later calls are
  // no-ops. "" on success (or when disabled), else why not (no directory to
  // put it in). A directory that cannot be written is no error here: every
  // write then fails, is counted, and its request goes unpruned of what it
  // would have evicted.
  std::string open_archive(const config::Config& config);
  // The open archive, or null (disabled, not opened).
  archive::Store* archive() const { return archive_ptr_.load(std::memory_order_acquire); }
  // The one thread the archive's files are written and read on (never an
  // I/O thread), started by the first call.
  WorkPool& archive_thread();
  // The one thread the dashboard's figures are read from the ledger on
  // (nice 10: a page polling never takes a core from an I/O thread), started
  // by the first call.
  WorkPool& dashboard_thread();
  // The one thread the plans ahead are computed on (docs/design.md §Memos and
  // caches; nice 19: spare work, never before a request's own diet), started
  // by the first call, and what became of them (/metrics).
  WorkPool& ahead_thread();
  PlanAheadCounts& plan_ahead_counts() { return plan_ahead_counts_; }
  // Requests whose archive write failed (the diet re-ran without semantic
  // eviction): tokendiet_archive_failures_total.
  void count_archive_failure() { archive_failures_.fetch_add(1, std::memory_order_relaxed); }

  // Hands the calibration to the ledger's writer at most once per
  // kCalibrationSaveInterval (cheap to call on every request; the logging
  // phase does). True when it did.
  bool maybe_save_calibration(std::chrono::steady_clock::time_point now);
  static constexpr std::chrono::seconds kCalibrationSaveInterval{60};

 private:
  Metrics metrics_;
  tok::Calibration calibration_;
  diet::DietCaches diet_caches_;
  BodyBudget body_budget_;
  quota::RunwayStore runways_;
  quota::SessionStore sessions_;
  std::unique_ptr<shared_state::SharedStore> shared_;  // kept until exit: filters hold the pointer
  std::atomic<shared_state::SharedStore*> shared_ptr_{nullptr};
  std::atomic<std::int64_t> next_calibration_save_{0};  // steady_clock ticks
  std::unique_ptr<ledger::Ledger> ledger_;              // kept until exit: I/O threads may still hold the pointer
  std::atomic<ledger::Ledger*> ledger_ptr_{nullptr};
  bool opened_ = false;
  std::unique_ptr<archive::Store> archive_;  // kept until exit, like the ledger
  std::atomic<archive::Store*> archive_ptr_{nullptr};
  bool archive_opened_ = false;
  std::atomic<std::uint64_t> archive_failures_{0};
  PlanAheadCounts plan_ahead_counts_;
  std::once_flag archive_thread_started_;
  std::unique_ptr<WorkPool> archive_thread_;
  std::once_flag dashboard_thread_started_;
  std::unique_ptr<WorkPool> dashboard_thread_;
  std::once_flag ahead_thread_started_;
  std::unique_ptr<WorkPool> ahead_thread_;  // after the caches its jobs use: stopped before them
  std::once_flag workers_started_;
  std::unique_ptr<WorkPool> diet_workers_;       // last: stopped before the caches its jobs use go
  std::atomic<WorkPool*> workers_ptr_{nullptr};  // for /metrics
};

// The one instance of this process.
ProcessState& process_state();

}  // namespace td::proxy
