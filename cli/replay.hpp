// `tokendiet replay`: recorded agent trajectories, request by request,
// through exactly the proxy's code path (diet/diet.hpp: parse -> count ->
// decide -> prune -> write), measured: tokens, cost under prefix caching,
// prefix stability, time, retention (cli/replay_retention.hpp) and the worst
// cumulative cost ratio, each defined in docs/benchmarks.md §Compression
// (replay), "How it is measured". Request t is the trajectory's messages
// before its t-th assistant message, as an OpenAI chat completions body.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"
#include "cli/replay_charges.hpp"
#include "cli/replay_retention.hpp"

namespace td::diet {
struct DietCaches;
}

namespace td::cli {

struct Trajectory {
  std::string id;
  std::string model;
  std::vector<std::string> message_json;  // each message as compact JSON
  std::vector<MessageText> texts;         // each message as text (retention)
};

// Reads a trajectory file's JSON (format: tests/fixtures/replay/README.md).
std::optional<Trajectory> parse_trajectory(std::string_view json, std::string& error);

// The body of the request made of the first `n` messages.
std::string request_body(const Trajectory& t, std::size_t n);

struct Report {
  std::string id;
  std::uint64_t requests = 0;
  std::uint64_t tokens_without = 0, tokens_with = 0;
  double cost_without = 0, cost_with = 0;  // under the chosen pricing
  std::uint64_t stable = 0, stable_of = 0;
  RetentionCount retention;
  RetentionCount copied;                       // copied-line retention
  double worst_ratio = 1.0;                    // largest cumulative cost ratio at a request boundary
  std::uint64_t losing = 0;                    // boundaries where that ratio was above 1
  std::vector<double> pipeline_ms;             // one per request
  std::vector<double> ahead_ms;                // one per plan ahead (pruning/lossy_plan.hpp), off the requests' path
  std::uint64_t fail_open = 0;                 // requests the diet forwarded untouched after a failure
  std::map<std::string, std::uint64_t> fired;  // strategy -> requests it changed
  Charges charges;                             // losses charged (cli/replay_charges.hpp), both pricings

  // One line per request (with `--requests`).
  struct Row {
    std::size_t messages = 0;
    std::uint64_t tokens_without = 0, tokens_with = 0;
    double cost_without = 0, cost_with = 0;
    bool stable = true;
    std::uint32_t stale_messages = 0;
    std::string fired;
  };
  std::vector<Row> rows;

  double reduction() const { return tokens_without ? 1.0 - double(tokens_with) / double(tokens_without) : 0.0; }
  double prefix_stability() const { return stable_of ? double(stable) / double(stable_of) : 1.0; }
  double percentile_ms(double p) const;
  void add(const Report& other);  // totals: sums, and every request's time
  // One more request of this trajectory: its cost, and the cumulative ratio at its boundary.
  void add_request_cost(double without, double with);
};

// Replays one trajectory with `profile` (nullptr: the profile `config` picks
// for the trajectory's model), through `caches`; its losses are charged as
// `recall` says which cuts can be recalled, and a recall call asks
// `recall_margin` lines on each side of a needed one (ChargeRules::margin_lines).
Report replay_trajectory(const Trajectory& t, const config::Config& config, const pruning::Profile* profile,
                         Pricing pricing, diet::DietCaches& caches, RecallMode recall = RecallMode::FromStart,
                         std::uint32_t recall_margin = ChargeRules{}.margin_lines);
// The same through caches of its own, new for this trajectory.
Report replay_trajectory(const Trajectory& t, const config::Config& config, const pruning::Profile* profile,
                         Pricing pricing, RecallMode recall = RecallMode::FromStart,
                         std::uint32_t recall_margin = ChargeRules{}.margin_lines);

// One request as the diet sent it, for the invariant tests.
struct SentRequest {
  std::size_t messages = 0;  // the trajectory's first `messages` messages
  std::string original;      // the request body as the client would send it
  std::string sent;          // as tokendiet sent it (== original when unchanged)
  bool fail_open = false;
  std::uint32_t stale_messages = 0;     // the pipeline's frontier
  std::uint32_t trimmed_until = 0;      // where trim-middle's cut ended (0: none)
  std::vector<std::string> archived;    // ids of the tombstones it holds (semantic mode)
  std::vector<std::string> tombstones;  // the texts they replaced
};
// Requests 1..T of a trajectory, in order, through the diet and `caches`.
std::vector<SentRequest> sent_requests(const Trajectory& t, const config::Config& config,
                                       const pruning::Profile* profile, diet::DietCaches& caches);
// The same through caches of its own, new for this trajectory.
std::vector<SentRequest> sent_requests(const Trajectory& t, const config::Config& config,
                                       const pruning::Profile* profile);

// The losses charged on a trajectory whose requests were sent as `sent`
// (sent_requests(), or made by hand).
Charges charge_losses(const Trajectory& t, const std::vector<SentRequest>& sent, const ChargeRules& rules);

}  // namespace td::cli
