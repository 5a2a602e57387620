#include "proxy/telemetry/process_state.hpp"

#include "config/config.hpp"
#include "config/state_paths.hpp"
#include "proxy/telemetry/log.hpp"

#include <algorithm>

namespace td::proxy {
namespace {

std::vector<ledger::CalibrationEntry> to_entries(const std::vector<tok::ModelCalibration>& state) {
  std::vector<ledger::CalibrationEntry> out;
  out.reserve(state.size());
  for (const auto& m : state) out.push_back({m.model, m.ratio, static_cast<std::int64_t>(m.samples)});
  return out;
}

}  // namespace

ProcessState::ProcessState() {
  auto workers = [this] { return workers_ptr_.load(std::memory_order_acquire); };
  metrics_.add_gauge("tokendiet_diet_jobs", "Big request bodies on a diet thread or waiting for one.",
                     [workers] { return workers() ? static_cast<std::int64_t>(workers()->pending()) : 0; });
  metrics_.add_gauge("tokendiet_big_body_bytes",
                     "Bytes of big request bodies in flight (limits.big_bodies_in_flight_bytes).",
                     [this] { return static_cast<std::int64_t>(body_budget_.in_flight()); });
  metrics_.add_gauge("tokendiet_big_bodies_waiting", "Big request bodies waiting, unread, for room in that budget.",
                     [this] { return static_cast<std::int64_t>(body_budget_.waiting()); });
  metrics_.add_counter("tokendiet_memory_releases_total",
                       "Times free heap memory was handed back to the system after big bodies.",
                       [workers] { return workers() ? workers()->releases() : 0; });
  metrics_.add_counter("tokendiet_ledger_dropped_total",
                       "Ledger rows dropped because the writer queue was full or closed.",
                       [this] { return ledger() ? ledger()->dropped() : 0; });
  metrics_.add_counter("tokendiet_ledger_rows_written_total", "Ledger rows committed to SQLite.",
                       [this] { return ledger() ? ledger()->written() : 0; });
  metrics_.add_counter("tokendiet_ledger_write_errors_total",
                       "Ledger rows lost to SQLite errors (disk full, I/O error).",
                       [this] { return ledger() ? ledger()->write_errors() : 0; });
  auto store = [this] { return archive(); };
  metrics_.add_counter("tokendiet_archive_entries_written_total",
                       "Evicted outputs archived for the first time (semantic eviction).",
                       [store] { return store() ? store()->written_entries() : 0; });
  metrics_.add_counter("tokendiet_archive_bytes_written_total", "Bytes of the evicted outputs archived.",
                       [store] { return store() ? store()->written_bytes() : 0; });
  metrics_.add_counter("tokendiet_archive_failures_total",
                       "Requests whose archive write failed: sent without semantic eviction.",
                       [this] { return archive_failures_.load(std::memory_order_relaxed); });
  metrics_.add_counter("tokendiet_archive_removed_total", "Archive entries removed by retention.",
                       [store] { return store() ? store()->removed_entries() : 0; });
  metrics_.add_gauge("tokendiet_archive_bytes", "Bytes the archive holds.",
                     [store] { return store() ? static_cast<std::int64_t>(store()->total_bytes()) : 0; });
  metrics_.add_counter("tokendiet_plans_ahead_total",
                       "Plans a later request of a session looks up, computed ahead on their own thread.",
                       [this] { return plan_ahead_counts_.computed.load(std::memory_order_relaxed); });
  metrics_.add_counter("tokendiet_plans_ahead_left_total",
                       "Plans ahead left to the request that needs them: their thread had its most waiting.",
                       [this] { return plan_ahead_counts_.left.load(std::memory_order_relaxed); });
  auto shared = [this] { return shared_store(); };
  metrics_.add_counter("tokendiet_shared_state_fallbacks_total",
                       "Round trips to the shared store (quota_store) that failed or timed out, and requests "
                       "decided with this replica's own stores while it was down.",
                       [shared] { return shared() ? shared()->fallbacks() : 0; });
  metrics_.add_gauge("tokendiet_shared_state_shared",
                     "1 while the shared store (quota_store) answers and the replicas share the runway; 0 "
                     "while this replica decides alone (or has no shared store).",
                     [shared] { return shared() && shared()->shared() ? 1 : 0; });
  metrics_.add_gauge("tokendiet_ledger_queue_rows", "Ledger rows waiting for the writer thread.",
                     [this] { return ledger() ? static_cast<std::int64_t>(ledger()->queued()) : 0; });
}

void ProcessState::open_shared_state(const config::Config& config) {
  if (shared_ || !config.quota_store.shared()) return;
  shared_ = std::make_unique<shared_state::SharedStore>(config.quota_store, runways_,
                                                        [](bool error, const std::string& message) {
                                                          if (error)
                                                            log_error("shared_state", message);
                                                          else
                                                            log_info("shared_state", message);
                                                        });
  shared_->start();
  shared_ptr_.store(shared_.get(), std::memory_order_release);
}

WorkPool& ProcessState::diet_workers(unsigned configured) {
  std::call_once(workers_started_, [&] {
    diet_workers_ = std::make_unique<WorkPool>(diet_thread_count(configured), nullptr, kDietThreadNice, "td-diet");
    workers_ptr_.store(diet_workers_.get(), std::memory_order_release);
  });
  return *diet_workers_;
}

std::string ProcessState::open_archive(const config::Config& config) {
  if (archive_opened_) return {};
  archive_opened_ = true;
  if (!config.archive.enabled) return {};
  auto dir = config::archive_dir(config.archive);
  if (!dir) return "no archive directory: set archive.path, or STATE_DIRECTORY, XDG_STATE_HOME or HOME";
  archive::Store::Options options;
  options.retention = {config.archive.max_bytes, std::chrono::duration_cast<std::chrono::seconds>(
                                                     std::chrono::milliseconds(config.archive.max_age_ms))};
  archive_ = std::make_unique<archive::Store>(*dir, std::move(options));
  archive_ptr_.store(archive_.get(), std::memory_order_release);
  return {};
}

WorkPool& ProcessState::archive_thread() {
  std::call_once(archive_thread_started_,
                 [&] { archive_thread_ = std::make_unique<WorkPool>(1, nullptr, 0, "td-archive"); });
  return *archive_thread_;
}

WorkPool& ProcessState::ahead_thread() {
  std::call_once(ahead_thread_started_,
                 [&] { ahead_thread_ = std::make_unique<WorkPool>(1, nullptr, 19, "td-ahead"); });
  return *ahead_thread_;
}

WorkPool& ProcessState::dashboard_thread() {
  std::call_once(dashboard_thread_started_,
                 [&] { dashboard_thread_ = std::make_unique<WorkPool>(1, nullptr, 10, "td-dashboard"); });
  return *dashboard_thread_;
}

std::string ProcessState::open_ledger(const config::Config& config) {
  if (opened_) return {};
  opened_ = true;
  if (!config.ledger.enabled) return {};
  auto path = config::ledger_file(config.ledger);
  if (!path) return "no ledger path: set ledger.path, or STATE_DIRECTORY, XDG_STATE_HOME or HOME";
  ledger::LedgerOptions options;
  options.path = *path;
  options.queue_capacity = config.ledger.queue_size;
  options.report_error = [](std::string_view message) { log_error("ledger", message); };
  auto opened = ledger::Ledger::open(options);
  if (!opened.ledger) return opened.error;
  ledger_ = std::move(opened.ledger);
  std::vector<tok::ModelCalibration> restored;
  for (const auto& e : ledger_->load_calibration())
    restored.push_back({e.model, e.ratio, static_cast<std::uint64_t>(std::max<std::int64_t>(e.samples, 0))});
  calibration_.set_state(restored);
  // The recaps a model wrote before the restart render the same bytes again.
  for (auto& row : ledger_->load_recap_summaries()) diet_caches_.summaries.restore(row.key, std::move(row.text));
  diet_caches_.summaries.persist_to([ledger = ledger_.get()](std::uint64_t key, const std::string& text) {
    ledger->save_recap_summary({key, text});
  });
  ledger_ptr_.store(ledger_.get(), std::memory_order_release);
  return {};
}

void ProcessState::close_ledger() {
  if (ledger::Ledger* l = ledger()) {
    if (auto state = calibration_.state(); !state.empty()) l->save_calibration(to_entries(state));
    l->close();
  }
}

bool ProcessState::maybe_save_calibration(std::chrono::steady_clock::time_point now) {
  ledger::Ledger* l = ledger();
  if (!l) return false;
  std::int64_t ticks = now.time_since_epoch().count();
  std::int64_t due = next_calibration_save_.load(std::memory_order_relaxed);
  if (ticks < due) return false;
  std::int64_t next = (now + kCalibrationSaveInterval).time_since_epoch().count();
  // One thread wins the interval; the others go on at once.
  if (!next_calibration_save_.compare_exchange_strong(due, next, std::memory_order_relaxed)) return false;
  auto state = calibration_.state();
  if (state.empty()) return false;
  l->save_calibration(to_entries(state));
  return true;
}

ProcessState& process_state() {
  static ProcessState instance;
  return instance;
}

}  // namespace td::proxy
