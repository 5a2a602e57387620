// How pruning/ counts tokens. Implemented by the tokenizer (exact BPE for
// OpenAI encodings, a calibrated estimator otherwise); strategies and the
// pipeline only ever see this interface.
#pragma once

#include <cstdint>
#include <string_view>

namespace td::pruning {

class TokenCounter {
 public:
  virtual ~TokenCounter() = default;
  virtual std::uint64_t count(std::string_view text) const = 0;
};

}  // namespace td::pruning
