// `tokendiet usage`: the ledger's rows summed per group and priced.
//
// Pure: takes the store's per-(group, model) sums and a price lookup, so the
// grouping and the cost arithmetic are testable without a file.
//
// Costs, in USD, from prices in USD per million tokens:
//   actual = fresh_prompt × input + cached_read × cached_input
//          + cache_write × cache_write + completion × output
//     (fresh_prompt = prompt − cached_read − cache_write; see providers/usage.hpp)
//   saved  = tokens_saved × (the prompt's cost ÷ prompt tokens)
//     (the pruned tokens at the rate the model's prompts were billed, cache
//      reads and writes at their prices, as they would have been billed in
//      the prompts they were cut from; at the input price when the upstream
//      reported no prompt tokens)
// A row whose model matches no price contributes tokens but no cost; the
// group then says how many requests were unpriced.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"
#include "ledger/ledger_store.hpp"

namespace td::ledger {

struct UsageGroup {
  std::string key;
  std::int64_t requests = 0;
  std::int64_t tokens_before = 0, tokens_after = 0, tokens_saved = 0;
  std::int64_t prompt = 0, completion = 0, cached_read = 0, cache_write = 0, reasoning = 0;
  std::int64_t fail_open = 0, errors = 0;
  double cost_usd = 0, saved_cost_usd = 0;
  std::int64_t unpriced_requests = 0;
  std::vector<std::string> unpriced_models;  // sorted, unique
};

struct UsageReport {
  GroupBy by = GroupBy::Model;
  std::int64_t since_ms = 0;  // 0: the whole ledger
  std::int64_t now_ms = 0;
  std::string session;                    // --session: only the sessions starting with it ("" all)
  std::vector<std::string> ledger_paths;  // the ledgers read, one per replica
  std::vector<UsageGroup> groups;
  UsageGroup total;  // key "total"
};

using PriceLookup = std::function<const config::Price*(std::string_view model)>;

// Several ledgers' sums (one per replica) as one ledger's: the rows of one
// (group, model) added up, first and last times the earliest and latest.
std::vector<UsageSums> merge_sums(std::vector<std::vector<UsageSums>> per_ledger);

UsageReport build_usage_report(const std::vector<UsageSums>& sums, GroupBy by, const PriceLookup& price_for);

// The cost of one model's usage at `price` (see above).
double actual_cost_usd(const config::Price& price, std::int64_t prompt, std::int64_t cached_read,
                       std::int64_t cache_write, std::int64_t completion);

// What `saved` tokens would have cost at the rate one model's prompts were
// billed (see above).
double saved_cost_usd(const config::Price& price, std::int64_t saved, std::int64_t prompt, std::int64_t cached_read,
                      std::int64_t cache_write);

// The table fits 80 columns: group, requests, errors, tokens in, sent,
// saved %, cost and saved cost, every count in one format (compact(): 980,
// 45.6k, 1.23M), every amount in dollars and cents; a group label too long
// for its column is cut ("..") and the upstream's billed tokens are totalled
// below (per group: --json).

std::string render_usage_table(const UsageReport& report);
// A count in the table's one format: up to 999 as is, then three significant
// digits with k, M or G (1.23M, 45.6k, 980k).
std::string compact(std::int64_t v);
std::string render_usage_json(const UsageReport& report);

// "model" | "day" | "session" | "provider" | "key".
std::optional<GroupBy> parse_group_by(std::string_view s);
std::string_view group_by_name(GroupBy by);

// --since: a duration back from now_ms ("90s", "30m", "24h", "7d", "2w") or a
// UTC date or time ("2026-11-01", "2026-11-01T12:00", "2026-11-01T12:00:00Z").
// Returns unix ms, or nullopt with `error` set.
std::optional<std::int64_t> parse_since(std::string_view s, std::int64_t now_ms, std::string* error);

}  // namespace td::ledger
