// The diet of one chat request body: adapter parse -> the pruning pipeline ->
// adapter write. DietFilter (the proxy's request body filter) and `tokendiet
// replay` both call diet_body(), so replay measures exactly what the proxy
// sends.
#pragma once

#include <cstdint>
#include <string>

#include "config/config.hpp"
#include "providers/route.hpp"
#include "pruning/pipeline.hpp"

namespace td::tok { class Calibration; }

namespace td::proxy {

struct DietOptions {
  const pruning::Profile* profile = nullptr;  // nullptr: the one the config picks for the model
  tok::Calibration* calibration = nullptr;    // the estimator's (may be null: fixed bytes/4)
};

struct DietOutcome {
  bool parsed = false;     // false: not a body the adapter understands (error says why)
  bool fail_open = false;  // parse or write failed: `body` was left exactly as it came
  std::string error;
  std::string model;       // from the body (or the Gemini path)
  bool stream = false;
  std::string profile;     // the profile that applied
  pruning::PipelineResult result;
  bool rewritten = false;  // `body` now holds the pruned request
  bool exact = false;      // tokens were counted by the model's own tokenizer
  // For estimated models: the uncalibrated (bytes/4) estimate of the prompt
  // as sent, which the logging phase compares with what the upstream billed.
  std::uint64_t raw_estimate = 0;
};

// Puts `body` on the diet of its profile. `body` is replaced only when the
// pipeline changed something and the writer spliced it; otherwise it is
// untouched. Counts go through the process-wide text count cache
// (proxy/filters/cached_counter.hpp). Never throws for bad input: failures come back
// as fail_open with a reason.
DietOutcome diet_body(const providers::ChatRoute& route, std::string& body, const config::Config& config,
                      const DietOptions& options = {});

}  // namespace td::proxy
