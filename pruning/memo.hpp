// A bounded, thread-safe memo of the strategies' pure text transforms
// (folding, snipping): the pruned form of a message depends only on its text
// and the profile's constants, and a resent history asks for the same forms
// every turn, so each is computed once and then looked up by a 128-bit hash
// of (transform, constants, the text's own 128-bit hash from text_hash.hpp).
// It changes how fast the pipeline runs, never what it decides: a miss
// recomputes the same result. find()/insert() serve other pure functions of
// a 128-bit key (providers/parsed_message_memo.hpp).
//
// No memo is process-wide: their owners pass them in (pruning/pipeline_caches.hpp).
//
// Sharded (16 shards, each behind its own mutex); each shard holds at most
// 1/16 of `max_bytes` of results and evicts its oldest entries first.
// Results are shared, immutable and reference-counted: a result evicted while
// a request still uses it lives until that request lets go.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "pruning/snip.hpp"
#include "pruning/text_hash.hpp"

namespace td::pruning {

namespace memo_detail {
struct Key {
  std::uint64_t lo = 0, hi = 0;
  bool operator==(const Key& o) const { return lo == o.lo && hi == o.hi; }
};
struct KeyHash {
  std::size_t operator()(const Key& k) const { return static_cast<std::size_t>(k.lo); }
};
Key key_of(std::uint64_t salt, tok::Hash128 text);
inline std::size_t bytes_of(const std::string& s) { return s.size(); }
std::size_t bytes_of(const Snipped& s);
}  // namespace memo_detail

template <class V>
class Memo {
 public:
  explicit Memo(std::size_t max_bytes) : shard_budget_(max_bytes / kShards) {}

  // The result of transform `fn` on the text of `part` (`salt` names the
  // transform and its constants): `fn` takes the text as a string_view and
  // returns std::optional<V>, nullopt meaning "leave the text as it is",
  // which comes back as nullptr.
  template <class Fn>
  std::shared_ptr<const V> get_or(std::uint64_t salt, const Part& part, Fn&& fn) {
    const memo_detail::Key key = memo_detail::key_of(salt, text_hash(part));
    if (auto hit = find(key)) return *hit;
    std::optional<V> out = fn(std::string_view(part.text));
    std::shared_ptr<const V> value = out ? std::make_shared<const V>(std::move(*out)) : nullptr;
    insert(key, value);
    return value;
  }

  // The lower half, for callers that key by something else than a part's
  // text: the stored value (maybe nullptr) or, when absent, nullopt.
  std::optional<std::shared_ptr<const V>> find(const memo_detail::Key& key) {
    Shard& s = shards_[key.hi % kShards];
    std::lock_guard lock(s.mu);
    auto it = s.map.find(key);
    if (it == s.map.end()) {
      ++s.misses;
      return std::nullopt;
    }
    ++s.hits;
    return it->second;
  }
  void insert(const memo_detail::Key& key, std::shared_ptr<const V> value) {
    const std::size_t cost = (value ? cost_of(*value) : 0) + kOverhead;
    if (cost > shard_budget_) return;
    Shard& s = shards_[key.hi % kShards];
    std::lock_guard lock(s.mu);
    if (s.map.count(key)) return;
    while (s.bytes + cost > shard_budget_ && !s.order.empty()) {
      auto old = s.map.find(s.order.front().first);
      s.bytes -= s.order.front().second;
      s.order.pop_front();
      if (old != s.map.end()) s.map.erase(old);
    }
    s.map.emplace(key, std::move(value));
    s.order.emplace_back(key, cost);
    s.bytes += cost;
  }

  std::uint64_t hits() const { return sum(&Shard::hits); }
  std::uint64_t misses() const { return sum(&Shard::misses); }

 private:
  static constexpr std::size_t kShards = 16, kOverhead = 96;
  // Bytes a value holds: its memo_bytes() where it has one, else bytes_of().
  static std::size_t cost_of(const V& v) {
    if constexpr (requires { v.memo_bytes(); }) {
      return v.memo_bytes();
    } else {
      return memo_detail::bytes_of(v);
    }
  }
  struct Shard {
    mutable std::mutex mu;
    std::unordered_map<memo_detail::Key, std::shared_ptr<const V>, memo_detail::KeyHash> map;
    std::deque<std::pair<memo_detail::Key, std::size_t>> order;  // insertion order, for eviction
    std::size_t bytes = 0;
    std::uint64_t hits = 0, misses = 0;
  };
  std::uint64_t sum(std::uint64_t Shard::*field) const {
    std::uint64_t n = 0;
    for (const Shard& s : shards_) {
      std::lock_guard lock(s.mu);
      n += s.*field;
    }
    return n;
  }

  std::size_t shard_budget_;
  Shard shards_[kShards];
};

// `fn` on the text of `part` through `memo` (Memo::get_or), or, without a
// memo, computed on the spot: the result is the same.
template <class V, class Fn>
std::shared_ptr<const V> memoized(Memo<V>* memo, std::uint64_t salt, const Part& part, Fn&& fn) {
  if (memo) return memo->get_or(salt, part, std::forward<Fn>(fn));
  std::optional<V> out = fn(std::string_view(part.text));
  return out ? std::make_shared<const V>(std::move(*out)) : nullptr;
}

// A salt for a transform and its constants.
std::uint64_t memo_salt(std::string_view transform, std::initializer_list<std::uint64_t> constants);

}  // namespace td::pruning
