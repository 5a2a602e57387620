// The quota filter's report (proxy/filters/quota_filter.hpp): what the
// policy's runway said of the request (docs/design.md §Policy).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace td::proxy {

struct QuotaReport {
  std::string_view survival{};                  // survival's outcome (pruning::outcome_name): "" none
  std::optional<std::int64_t> runway_tokens{};  // the runway left after this request (tightest limit)
  std::string_view quota_group{};               // the runway's quota group ("" none known): the profile's or the model
};

}  // namespace td::proxy
