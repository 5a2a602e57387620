// The TPM runway as the policy sees it: a snapshot of the per-minute token
// limits that apply to one request (docs/design.md §Policy), taken by the
// proxy's quota store (quota/runway_store.hpp) and handed to decide() as a
// value. Pure arithmetic, no clock: the snapshot says how full each bucket is
// now and how fast it refills.
//
// Every limit is a token bucket that holds at most `limit` tokens and refills
// continuously at limit per window (Anthropic documents this algorithm;
// OpenAI's reset headers match it). A request takes its ask when it is sent;
// a bucket may go below zero when requests were admitted ahead of the
// refill, and later requests wait for it.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>

namespace td::pruning {

struct RunwayBucket {
  double limit = 0;          // tokens per window; 0: no such limit known
  double level = 0;          // tokens it holds now; below 0: taken ahead of the refill
  double refill_per_ms = 0;  // limit / window length

  bool known() const { return limit > 0 && refill_per_ms > 0; }
  // What an ask of `n` tokens needs the bucket to hold: n (with the margin),
  // never more than a full bucket, which admits anything up to the limit.
  double needed(double n, double margin) const { return std::min(n * margin, limit); }
  // Whether it can take `n` now; never an ask over the limit. (Within a
  // millionth of a token: a wait rounded up to whole ms must fit.)
  bool holds(double n, double margin) const { return !known() || (n <= limit && level + 1e-6 >= needed(n, margin)); }
  // How long until it holds what `n` needs (0: now). Rounded up to whole ms,
  // so a request admitted after that wait does fit.
  std::chrono::milliseconds wait_for(double n, double margin) const {
    if (!known() || level + 1e-6 >= needed(n, margin)) return std::chrono::milliseconds{0};
    return std::chrono::milliseconds{static_cast<std::int64_t>(std::ceil((needed(n, margin) - level) / refill_per_ms))};
  }
};

// What one request asks of the window, in the provider's own tokens.
struct RunwayAsk {
  double input = 0;   // the prompt as the provider counts it (Anthropic: uncached only)
  double output = 0;  // the output cap, where the provider reserves it at admission
};

// The buckets that apply to a request: its provider's limits for its API key
// and quota group.
struct Runway {
  RunwayBucket combined;               // OpenAI TPM (input + reserved output), Gemini TPM (input)
  RunwayBucket input;                  // Anthropic input tokens per minute (cache reads not counted)
  RunwayBucket output;                 // Anthropic output tokens per minute (max_tokens reserved)
  bool combined_counts_output = true;  // false for Gemini: its TPM counts input

  bool known() const { return combined.known() || input.known() || output.known(); }

  double combined_ask(const RunwayAsk& a) const { return a.input + (combined_counts_output ? a.output : 0); }

  bool holds(const RunwayAsk& a, double margin) const {
    return combined.holds(combined_ask(a), margin) && input.holds(a.input, margin) && output.holds(a.output, margin);
  }
  std::chrono::milliseconds wait_for(const RunwayAsk& a, double margin) const {
    return std::max({combined.wait_for(combined_ask(a), margin), input.wait_for(a.input, margin),
                     output.wait_for(a.output, margin)});
  }
  // Larger than a whole window of some limit: it never fits, however long it waits.
  bool exceeds_limits(const RunwayAsk& a) const {
    return (combined.known() && combined_ask(a) > combined.limit) || (input.known() && a.input > input.limit) ||
           (output.known() && a.output > output.limit);
  }
  // The tightest known bucket's level `after` from now, once `a` is taken
  // (what the explain header reports), and that bucket's limit. Unknown
  // runway: 0, 0.
  struct Left {
    double tokens = 0;
    double limit = 0;
  };
  Left left_after(const RunwayAsk& a, std::chrono::milliseconds after_ms = {}) const {
    Left best{};
    bool any = false;
    auto consider = [&](const RunwayBucket& b, double ask) {
      if (!b.known()) return;
      const double then = std::min(b.limit, b.level + b.refill_per_ms * double(after_ms.count()));
      const double after = then - ask;
      if (!any || after < best.tokens) best = {after, b.limit};
      any = true;
    };
    consider(combined, combined_ask(a));
    consider(input, a.input);
    consider(output, a.output);
    return best;
  }
};

}  // namespace td::pruning
