// The recovery filter's report (proxy/filters/recovery_filter.hpp): a
// context-overflow answer retried, compressed to fit (docs/design.md §Recovery).
#pragma once

#include <cstdint>
#include <string_view>

namespace td::proxy {

struct RecoveryReport {
  std::string_view outcome{};    // "retried", "no_fit"
  std::uint64_t fit_tokens = 0;  // "retried": the budget (diet tokens) the retry fitted in
};

}  // namespace td::proxy
