// The /metrics registry: counters and histograms updated by the logging phase
// of every request, rendered in the Prometheus text exposition format 0.0.4.
//
// Lock-cheap on purpose: every number is an atomic, and the per-(provider,
// model) and per-mode series live in copy-on-write maps whose lookups are a
// single atomic load plus a binary search. The mutex is taken only when a
// series is seen for the first time. The number of series is capped (model
// names come from clients), beyond which they are folded into model="_other_".
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "ledger/ledger_row.hpp"

namespace td::proxy {

// A histogram of durations in milliseconds, rendered in seconds.
class LatencyHistogram {
 public:
  explicit LatencyHistogram(std::vector<std::uint32_t> bounds_ms);
  void observe(std::int64_t ms);
  const std::vector<std::uint32_t>& bounds_ms() const { return bounds_; }
  // Cumulative counts per bound, then +Inf (== count); sum in ms.
  std::vector<std::uint64_t> cumulative() const;
  std::uint64_t sum_ms() const { return sum_ms_.load(std::memory_order_relaxed); }

 private:
  std::vector<std::uint32_t> bounds_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> buckets_;  // bounds_.size() + 1 (last: +Inf)
  std::atomic<std::uint64_t> sum_ms_{0};
};

// Series keyed by a string, found without a lock once created.
template <class T>
class SeriesMap {
 public:
  explicit SeriesMap(std::size_t cap) : cap_(cap) {
    snapshots_.push_back(std::make_unique<Snapshot>());
    current_.store(snapshots_.back().get(), std::memory_order_release);
  }
  SeriesMap(const SeriesMap&) = delete;
  SeriesMap& operator=(const SeriesMap&) = delete;

  // The series for `key` if it exists: one atomic load, no lock.
  T* find(std::string_view key) const { return find(*current_.load(std::memory_order_acquire), key); }

  // The series for `key`, created on first sight; once `cap` series exist,
  // new keys share the series of `overflow_key`.
  T& get(std::string_view key, std::string_view overflow_key) {
    if (T* t = find(key)) return *t;
    return insert(key, overflow_key);
  }

  // The slow path of get(), under the mutex.
  T& insert(std::string_view key, std::string_view overflow_key) {
    std::lock_guard lock(mu_);
    const Snapshot& now = *current_.load(std::memory_order_acquire);
    if (T* t = find(now, key)) return *t;  // another thread made it meanwhile
    if (now.entries.size() >= cap_) {
      if (T* t = find(now, overflow_key)) return *t;
      key = overflow_key;
    }
    keys_.push_back(std::make_unique<std::string>(key));
    series_.push_back(std::make_unique<T>());
    auto next = std::make_unique<Snapshot>(now);
    Entry e{*keys_.back(), series_.back().get()};
    auto at = std::lower_bound(next->entries.begin(), next->entries.end(), e.key,
                               [](const Entry& a, std::string_view k) { return a.key < k; });
    next->entries.insert(at, e);
    snapshots_.push_back(std::move(next));
    current_.store(snapshots_.back().get(), std::memory_order_release);
    return *e.series;
  }

  template <class F>
  void for_each(F&& f) const {  // in key order
    for (const auto& e : current_.load(std::memory_order_acquire)->entries) f(e.key, *e.series);
  }

 private:
  struct Entry {
    std::string_view key;  // points into keys_
    T* series;
  };
  struct Snapshot {
    std::vector<Entry> entries;  // sorted by key
  };
  static T* find(const Snapshot& s, std::string_view key) {
    auto at = std::lower_bound(s.entries.begin(), s.entries.end(), key,
                               [](const Entry& a, std::string_view k) { return a.key < k; });
    return at != s.entries.end() && at->key == key ? at->series : nullptr;
  }

  std::size_t cap_;
  std::mutex mu_;  // writers only
  std::vector<std::unique_ptr<std::string>> keys_;
  std::vector<std::unique_ptr<T>> series_;
  // Every snapshot ever published, kept until destruction: a reader may still
  // be walking an old one, and with at most cap_ + 1 series the total is small.
  std::vector<std::unique_ptr<Snapshot>> snapshots_;
  std::atomic<const Snapshot*> current_{nullptr};
};

class Metrics {
 public:
  Metrics();
  ~Metrics();  // out of line: ModelSeries is complete only in metrics.cpp
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // Everything the logging phase knows about a finished request.
  void record(const ledger::LedgerRow& row);

  // The in-flight gauge: the request phase calls started(), the logging
  // phase finished() (InFlight does both for a scope).
  void started() { in_flight_.fetch_add(1, std::memory_order_relaxed); }
  void finished() { in_flight_.fetch_sub(1, std::memory_order_relaxed); }
  std::int64_t in_flight() const { return in_flight_.load(std::memory_order_relaxed); }

  // A counter or gauge owned elsewhere (the ledger's drop count, the
  // connection count), read at render time. Register before serving.
  void add_counter(std::string name, std::string help, std::function<std::uint64_t()> read);
  void add_gauge(std::string name, std::string help, std::function<std::int64_t()> read);

  // The Prometheus text exposition (Content-Type: kContentType).
  std::string render() const;
  static constexpr std::string_view kContentType = "text/plain; version=0.0.4; charset=utf-8";

  // Caps on label cardinality (client-chosen model names).
  static constexpr std::size_t kMaxModelSeries = 256;
  static constexpr std::size_t kMaxModeSeries = 32;

  struct ModelSeries;  // defined in metrics.cpp
  struct ModeSeries {
    std::atomic<std::uint64_t> requests{0};
  };
  // The runway left after the last request of a (provider, quota group).
  struct RunwaySeries {
    std::atomic<std::int64_t> tokens{0};
  };

 private:
  SeriesMap<ModelSeries> models_;
  SeriesMap<ModeSeries> modes_;
  SeriesMap<RunwaySeries> runways_;
  std::atomic<std::int64_t> in_flight_{0};
  struct External {
    std::string name, help, type;
    std::function<std::int64_t()> read;
  };
  mutable std::mutex external_mu_;
  std::vector<External> external_;
};

// started() now, finished() at scope exit.
class InFlight {
 public:
  explicit InFlight(Metrics& m) : m_(&m) { m.started(); }
  ~InFlight() {
    if (m_) m_->finished();
  }
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;

 private:
  Metrics* m_;
};

// "2xx" for 200..299 and so on; "none" for 0 (no response was sent).
std::string_view status_class(int status);

// Escapes a label value: backslash, double quote and line feed.
std::string escape_label_value(std::string_view v);

}  // namespace td::proxy
