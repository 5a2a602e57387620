// `tokendiet usage --compare`: the control arm against the treatment, per
// model and in total (docs/design.md §Policy, The control arm; README
// "Measuring the diet").
//
// Pure: takes the store's per-session sums (LedgerStore::session_sums(),
// several ledgers' merged) and a price lookup. A session is the unit the
// arm was drawn for, so the intervals come from a bootstrap over sessions:
// each arm's sessions resampled with replacement, `resamples` times, from a
// fixed seed (the same ledger gives the same intervals), and the 2.5th and
// 97.5th percentiles taken of each figure and of the difference. A
// difference is resolved when its interval leaves out zero.
//
// Figures: sessions; requests per session; effective input cost (the input
// as billed, cache reads and writes at their prices) per session and per
// request; re-reads, recall rounds, context-length errors and 429s per 100
// requests. Costs compare as the treatment's relative difference from the
// control (-20 %: a fifth cheaper), rates as the difference in points per
// 100 requests.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ledger/ledger_store.hpp"
#include "ledger/usage_report.hpp"

namespace td::ledger {

enum class ArmFigure : std::uint8_t {
  RequestsPerSession,
  CostPerSession,
  CostPerRequest,
  RereadsPer100,
  RecallsPer100,
  ContextErrorsPer100,
  RateLimitedPer100,
};
inline constexpr std::size_t kArmFigures = 7;
// "requests_per_session", "cost_per_session", ... (the JSON's names).
std::string_view arm_figure_name(ArmFigure f);
// Whether the difference is relative (%) rather than in points per 100.
bool arm_figure_relative(ArmFigure f);

struct Interval {
  double value = 0, low = 0, high = 0;
  bool known = false;  // false: too few sessions (fewer than 2 in an arm)
};

// One arm's sums over its sessions.
struct ArmSums {
  std::int64_t sessions = 0, requests = 0;
  double cost_usd = 0;
  std::int64_t rereads = 0, recall_rounds = 0, context_errors = 0, rate_limited = 0;
  std::int64_t unpriced_requests = 0;  // with usage, and no price then or now
};

struct ArmGroup {
  std::string key;  // the model, or "total"
  ArmSums treatment, control;
  std::array<Interval, kArmFigures> treatment_figures{}, control_figures{};
  std::array<Interval, kArmFigures> difference{};  // treatment vs control
  std::string sentence;                            // whether the cost difference is resolved, in words
};

struct ArmComparison {
  int resamples = 0;
  std::uint64_t seed = 0;
  std::vector<ArmGroup> groups;  // by model, then
  ArmGroup total;                // a session's models together
};

struct CompareOptions {
  int resamples = 2000;
  std::uint64_t seed = 0x7d1e7c0a11a2b5ull;
};

// Several ledgers' session sums (one per replica) as one: the rows of one
// (session, model, arm) added up, so a session that went through several
// replicas is one session.
std::vector<SessionSums> merge_session_sums(std::vector<std::vector<SessionSums>> per_ledger);

ArmComparison compare_arms(const std::vector<SessionSums>& sessions, const PriceLookup& price_for,
                           const CompareOptions& options = {});

}  // namespace td::ledger
