#include "ledger/ledger.hpp"

#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <span>

namespace td::ledger {

Ledger::Opened Ledger::open(const LedgerOptions& options) {
  auto opened = LedgerStore::open(options.path, LedgerStore::Access::ReadWrite);
  if (!opened.store) return {nullptr, opened.error};
  std::unique_ptr<Ledger> ledger(new Ledger(options, std::move(opened.store)));
  if (options.start_writer) ledger->start();
  return {std::move(ledger), {}};
}

Ledger::Ledger(LedgerOptions options, std::unique_ptr<LedgerStore> store)
    : options_(std::move(options)), store_(std::move(store)) {
  if (options_.queue_capacity == 0) options_.queue_capacity = 1;
  if (options_.batch_rows == 0) options_.batch_rows = 1;
  if (options_.commit_rows == 0) options_.commit_rows = 1;
}

Ledger::~Ledger() { close(); }

bool Ledger::submit(LedgerRow row) noexcept {
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    if (closed_ || stopping_ || queue_.size() >= options_.queue_capacity) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    try {
      queue_.push_back(std::move(row));
    } catch (...) {  // out of memory: the row is lost, the request is not
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    ++accepted_;
    // The writer sleeps while the queue is empty and commits by the flush
    // interval after the first row; wake it only on those two edges.
    if (queue_.size() == 1) oldest_ = std::chrono::steady_clock::now();
    wake = queue_.size() == 1 || queue_.size() == options_.batch_rows;
  }
  if (wake) wake_.notify_one();
  return true;
}

void Ledger::start() {
  std::lock_guard lock(mu_);
  if (writer_.joinable() || closed_) return;
  writer_ = std::thread([this] { run(); });
}

std::size_t Ledger::queued() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

bool Ledger::flush() {
  std::unique_lock lock(mu_);
  std::uint64_t target = accepted_;
  if (processed_ >= target && !state_pending()) return true;
  if (!writer_.joinable() && !stopping_) return false;  // not started: nobody would write
  flush_asked_ = true;
  wake_.notify_one();
  done_.wait(lock, [&] { return (processed_ >= target && !state_pending()) || writer_done_; });
  return processed_ >= target;
}

void Ledger::close() {
  std::thread writer;
  {
    std::lock_guard lock(mu_);
    if (closed_) return;
    closed_ = true;
    stopping_ = true;
    writer = std::move(writer_);
  }
  wake_.notify_one();
  if (writer.joinable()) {
    writer.join();
  } else {
    // Never started: commit what was queued on this thread.
    std::vector<LedgerRow> batch;
    State state;
    {
      std::lock_guard lock(mu_);
      batch.swap(queue_);
      state = take_state();
    }
    write(batch, state);
    std::lock_guard lock(mu_);
    processed_ += batch.size();
  }
  {
    std::lock_guard lock(mu_);
    writer_done_ = true;
  }
  done_.notify_all();
}

void Ledger::save_calibration(std::vector<CalibrationEntry> entries) {
  {
    std::lock_guard lock(mu_);
    if (closed_) return;
    calibration_ = std::move(entries);
    calibration_pending_ = true;
  }
  wake_.notify_one();
}

void Ledger::save_recap_summary(RecapSummaryRow row) {
  {
    std::lock_guard lock(mu_);
    if (closed_) return;
    summaries_.push_back(std::move(row));
  }
  wake_.notify_one();
}

Ledger::State Ledger::take_state() {
  State state;
  if (calibration_pending_) state.calibration.swap(calibration_);
  calibration_pending_ = false;
  state.summaries.swap(summaries_);
  return state;
}

template <typename Read>
auto Ledger::read_store(Read read) {
  // The store is the writer's; borrow it under the queue lock only before
  // the writer exists (startup), otherwise read through a second connection.
  {
    std::lock_guard lock(mu_);
    if (!writer_.joinable() && !closed_) return read(*store_);
  }
  auto opened = LedgerStore::open(options_.path, LedgerStore::Access::ReadOnly);
  return opened.store ? read(*opened.store) : decltype(read(*store_)){};
}

std::vector<RecapSummaryRow> Ledger::load_recap_summaries() {
  return read_store([](LedgerStore& s) { return s.load_recap_summaries(kRecapSummariesKept); });
}

std::vector<CalibrationEntry> Ledger::load_calibration() {
  return read_store([](LedgerStore& s) { return s.load_calibration(); });
}

void Ledger::run() {
  pthread_setname_np(pthread_self(), "td-ledger");
  // Background work: best effort (a sandbox may refuse; the writer still runs).
  if (options_.writer_nice != 0) setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), options_.writer_nice);
  std::vector<LedgerRow> batch;
  State state;
  std::unique_lock lock(mu_);
  for (;;) {
    wake_.wait(lock, [&] { return stopping_ || flush_asked_ || state_pending() || !queue_.empty(); });
    if (!stopping_ && !flush_asked_ && !queue_.empty()) {
      // Gather a batch: until flush_interval after the oldest queued row
      // arrived, not after the writer woke: rows queued while the last batch
      // was being committed have waited already.
      wake_.wait_until(lock, oldest_ + options_.flush_interval,
                       [&] { return stopping_ || flush_asked_ || queue_.size() >= options_.batch_rows; });
    }
    flush_asked_ = false;
    batch.swap(queue_);
    state = take_state();
    bool stop = stopping_;
    lock.unlock();

    write(batch, state);
    std::uint64_t n = batch.size();
    batch.clear();
    // A backlog (the writer is niced, and a saturated machine can leave it
    // behind for a while) grew this vector: give that memory back rather
    // than keep two vectors sized for the worst backlog ever seen.
    if (batch.capacity() > 4 * options_.batch_rows) std::vector<LedgerRow>().swap(batch);
    state = {};

    lock.lock();
    processed_ += n;
    done_.notify_all();
    if (stop && queue_.empty() && !state_pending()) return;
  }
}

void Ledger::write(std::vector<LedgerRow>& batch, State& state) {
  std::span<const LedgerRow> rest(batch);
  while (!rest.empty()) {
    auto chunk = rest.first(std::min(rest.size(), options_.commit_rows));
    rest = rest.subspan(chunk.size());
    std::string why = store_->insert(chunk);
    if (why.empty()) {
      feed_->committed(chunk, store_->last_insert_id());
      written_.fetch_add(chunk.size(), std::memory_order_relaxed);
      transactions_.fetch_add(1, std::memory_order_relaxed);
    } else {
      // Keep going: a full disk may clear up; the loss is counted and said.
      std::uint64_t before = write_errors_.fetch_add(chunk.size(), std::memory_order_relaxed);
      if (before == 0 || (before & (before - 1)) == 0)  // first, then at powers of two
        report(options_.path + ": " + std::to_string(chunk.size()) + " rows not written: " + why);
    }
    if (!rest.empty()) std::this_thread::yield();  // let a waiting I/O thread have the core
  }
  if (!state.calibration.empty()) {
    std::string why = store_->save_calibration(state.calibration);
    if (!why.empty()) report(options_.path + ": calibration not saved: " + why);
  }
  if (!state.summaries.empty()) {
    std::string why = store_->save_recap_summaries(state.summaries, kRecapSummariesKept);
    if (!why.empty()) report(options_.path + ": recap summaries not saved: " + why);
  }
}

}  // namespace td::ledger
