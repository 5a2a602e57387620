// The recaps a model wrote, by prefix hash (docs/design.md §Policy, the
// summarizer): the diet's recap looks its prefix up here
// (pruning/strategies/recap.hpp), the diet filter fills it. An empty text
// records that the summarizer failed for that prefix, so the extractive recap
// stands for it and renders the same bytes on every later request. Bounded:
// past kCapacity prefixes the oldest go first (a prefix evicted and seen again
// is summarized again). Kept across restarts where the ledger is on: each new
// text goes to `persist` (ProcessState hands it to the ledger's writer) and the
// ledger's texts come back through restore() at startup.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace td::diet {

class RecapSummaryCache {
 public:
  static constexpr std::size_t kCapacity = 2048;

  std::optional<std::string> get(std::uint64_t prefix_hash) const {
    std::lock_guard lock(mu_);
    auto it = texts_.find(prefix_hash);
    if (it == texts_.end()) return std::nullopt;
    return it->second;
  }
  // The first text stored for a prefix stays (two requests that raced to
  // summarize it render the first answer).
  void put(std::uint64_t prefix_hash, std::string text) {
    Persist persist;
    {
      std::lock_guard lock(mu_);
      if (!insert(prefix_hash, text)) return;
      persist = persist_;
    }
    if (persist) persist(prefix_hash, text);
  }
  // A text kept from before (the ledger's, at startup): stored, not persisted again.
  void restore(std::uint64_t prefix_hash, std::string text) {
    std::lock_guard lock(mu_);
    insert(prefix_hash, std::move(text));
  }
  // Where put() sends each new text; set once at startup.
  using Persist = std::function<void(std::uint64_t prefix_hash, const std::string& text)>;
  void persist_to(Persist persist) {
    std::lock_guard lock(mu_);
    persist_ = std::move(persist);
  }
  std::size_t size() const {
    std::lock_guard lock(mu_);
    return texts_.size();
  }

 private:
  bool insert(std::uint64_t prefix_hash, std::string text) {  // under mu_
    if (!texts_.emplace(prefix_hash, std::move(text)).second) return false;
    order_.push_back(prefix_hash);
    while (order_.size() > kCapacity) {
      texts_.erase(order_.front());
      order_.pop_front();
    }
    return true;
  }

  mutable std::mutex mu_;
  Persist persist_;
  std::unordered_map<std::uint64_t, std::string> texts_;
  std::deque<std::uint64_t> order_;
};

}  // namespace td::diet
