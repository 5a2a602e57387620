// The arms compared (ledger/arm_comparison.hpp) as JSON: one writer for
// `tokendiet usage --compare --json` and the dashboard's stats
// (docs/design.md §Dashboard), so both show the same figures.
#pragma once

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "ledger/arm_comparison.hpp"

namespace td::ledger {

// Writes `resamples`, `seed`, `groups` (per model) and `total` into the
// object `w` is writing.
void write_comparison(rapidjson::Writer<rapidjson::StringBuffer>& w, const ArmComparison& comparison);

}  // namespace td::ledger
