// Token counts of messages as the pipeline needs them: through the count
// cache when there is one (a resent message costs a hash, not BPE).
#pragma once

#include <cstdint>

#include "pruning/conversation.hpp"
#include "pruning/token_counter.hpp"
#include "pruning/tokenizer/count_cache.hpp"
#include "pruning/tokenizer/message_count.hpp"

namespace td::pruning {

class Tally {
 public:
  Tally(const TokenCounter& counter, tok::CountCache* cache)
      : counter_(counter), cache_(cache), salt_(cache ? counter.cache_salt() : 0) {}

  std::uint64_t message(const Message& m) const {
    if (m.removed) return 0;
    if (salt_ == 0) return tok::count_message(m, counter_);
    const std::uint64_t key = tok::message_hash(m, salt_);
    if (auto hit = cache_->get(key)) return *hit;
    const std::uint64_t n = tok::count_message(m, counter_);
    cache_->put(key, n);
    return n;
  }
  // A text's tokens (not cached: the recap's lines, counted once per request).
  std::uint64_t text(std::string_view t) const { return counter_.count(t); }
  // Everything but the messages: the reply primer and the tool definitions.
  std::uint64_t fixed(const Conversation& conv) const {
    if (conv.fixed_overhead_text.empty()) return tok::BillingRules{}.reply_priming;
    return tok::BillingRules{}.reply_priming + counter_.count(conv.fixed_overhead_text);
  }
  std::uint64_t conversation(const Conversation& conv) const {
    std::uint64_t n = fixed(conv);
    for (const Message& m : conv.messages) n += message(m);
    return n;
  }
  // Names the counter and its rules, or 0 when counts are not cached (an
  // estimating counter: cheaper than a hash); results that hold counts are
  // only memoized under a non-zero salt.
  std::uint64_t salt() const { return salt_; }

 private:
  const TokenCounter& counter_;
  tok::CountCache* cache_;
  std::uint64_t salt_;
};

}  // namespace td::pruning
