// How pruning/ counts tokens. Implemented by the tokenizer (exact BPE for
// OpenAI encodings, a calibrated estimator otherwise); strategies and the
// pipeline only ever see this interface. Message-level counting (per-message
// overhead, tool schemas, the count cache) is td::tok::count_conversation in
// pruning/tokenizer/message_count.hpp.
#pragma once

#include <cstdint>
#include <string_view>

namespace td::pruning {

class TokenCounter {
 public:
  virtual ~TokenCounter() = default;
  virtual std::uint64_t count(std::string_view text) const = 0;
  // Non-zero when count() is a pure function of the text that never changes
  // (an exact encoding): counts may then be cached under this salt. Zero for
  // counters whose answer drifts (a calibrated estimator) or that are cheaper
  // than a hash.
  virtual std::uint64_t cache_salt() const { return 0; }
  // Non-zero when count() is count_from_raw(raw(text)), raw() a pure function
  // of the text that never changes while the step after it may (a calibrated
  // estimator's ratio): raw values may then be cached under this salt, and a
  // resent text costs a hash instead of a pass over its bytes
  // (docs/design.md §Memos and caches).
  virtual std::uint64_t raw_salt() const { return 0; }
  virtual std::uint64_t raw(std::string_view) const { return 0; }
  virtual std::uint64_t count_from_raw(std::uint64_t) const { return 0; }
  // count(text), for a text whose 128-bit hash (pruning/text_hash.hpp) the
  // caller holds already: a counter that caches may key by it instead of
  // hashing the text's bytes again (docs/design.md §Memos and caches).
  virtual std::uint64_t count_hashed(std::string_view text, std::uint64_t, std::uint64_t) const { return count(text); }
  // True when count() equals what the provider bills, not an estimate.
  virtual bool exact() const { return false; }
};

}  // namespace td::pruning
