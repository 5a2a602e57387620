// Ledger rows for tests: every field set, each distinct per index.
#pragma once

#include <string>

#include "ledger/ledger_row.hpp"

namespace td::test {

inline ledger::LedgerRow sample_row(int i, std::string model = "gpt-4o") {
  ledger::LedgerRow r;
  r.time_ms = 1'790'000'000'000 + i * 1000;
  r.request_id = "req-" + std::to_string(i);
  r.session = "sess-" + std::to_string(i % 3);
  r.key_fingerprint = "0123456789abcdef";
  r.provider = "openai";
  r.model = std::move(model);
  r.profile = "default";
  r.mode = i % 2 ? "standard" : "none";
  r.tokens_before = 1000 + i;
  r.tokens_after = 600 + i;
  r.prompt_tokens = 610 + i;
  r.completion_tokens = 50 + i;
  r.cached_read_tokens = 100;
  r.cache_write_tokens = 7;
  r.reasoning_tokens = 20;
  r.usage_present = true;
  r.status = 200;
  r.ttfb_ms = 120 + i;
  r.total_ms = 900 + i;
  r.stream = i % 2 == 1;
  r.strategies = {"stale_tool_outputs", "identical_tool_outputs"};
  r.fail_open = i % 5 == 4;
  r.bytes_in = 4000 + i;
  r.bytes_out = 800 + i;
  if (i % 3 == 2) {  // survival's report (schema 6)
    r.survival = i % 2 ? "wait" : "shrink";
    r.wait_ms = 40 + i;
    r.quota_group = "team-" + std::to_string(i);
    r.runway_tokens = i % 4 == 0 ? 0 : 12'000 - i;  // 0 is a value, not "none"
  }
  r.arm = i % 4 == 1 ? "control" : "treatment";  // the arm and the outcome fields (schema 7)
  r.session_key = "00000000000000a" + std::to_string(i % 10);
  r.tokens_diet = 500 + i;
  r.rereads = static_cast<std::uint32_t>(i % 3);
  r.recall_rounds = static_cast<std::uint32_t>(i % 2);
  r.context_errors = i % 7 == 6;
  if (i % 3 != 1) r.input_cost_usd = 0.25 * i + 0.125;
  return r;
}

}  // namespace td::test
