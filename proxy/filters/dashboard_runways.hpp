// The dashboard's runways (docs/design.md §Dashboard, "runways"): each quota
// group's runway now, from the live stores the proxy holds (the replicas'
// shared one in Redis while it answers, else this process's), not from the
// ledger, whose rows only say what a runway was after a request. Joined to
// the ledger's figures here, in the proxy layer: the ledger knows nothing of
// quota/ (docs/design.md §Layout).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "quota/runway_status.hpp"

namespace td::quota {
class RunwayStore;
}
namespace td::shared_state {
class SharedStore;
}

namespace td::proxy {

// Lists the runways now; called off the I/O threads (it may wait one Redis
// round trip, at most the store's time-out).
using RunwayLister = std::function<std::vector<quota::RunwayStatus>()>;

// The most runways a list holds: the most recently used.
inline constexpr std::size_t kMaxDashboardRunways = 200;

// The runways of `shared` while Redis answers, else `local`'s.
std::vector<quota::RunwayStatus> dashboard_runways(const quota::RunwayStore& local, shared_state::SharedStore* shared);

// The runways as the stats' `runways` array (those with a limit or the
// headers' figures), the tightest first; times as Unix ms from `now_ms`.
std::string runways_json(const std::vector<quota::RunwayStatus>& runways, std::int64_t now_ms);

// `stats` (a JSON object) with its members `runways_ms` (when they were
// listed, Unix ms) and `runways` (a JSON array).
std::string with_runways(std::string stats, std::string_view runways, std::int64_t listed_ms);

}  // namespace td::proxy
