// `tokendiet usage --compare` (ledger/arm_comparison.hpp): the control arm
// against the treatment, rendered as a table that fits 80 columns or as one
// JSON object.
#pragma once

#include <string>
#include <vector>

#include "ledger/arm_comparison.hpp"

namespace td::cli {

std::string render_compare_table(const ledger::ArmComparison& comparison, const std::vector<std::string>& ledgers);
std::string render_compare_json(const ledger::ArmComparison& comparison, const std::vector<std::string>& ledgers,
                                std::int64_t since_ms);

}  // namespace td::cli
