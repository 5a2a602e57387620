#include "ledger/row_feed.hpp"

#include <cmath>

namespace td::ledger {

FedRow fed_row(const LedgerRow& r, std::int64_t id) {
  FedRow f;
  f.id = id;
  f.time_ms = r.time_ms;
  f.request_id = r.request_id;
  f.session_key = r.session_key;
  f.session = r.session;
  f.model = r.model;
  f.arm = r.arm;
  f.key_fingerprint = r.key_fingerprint;
  f.mode = r.mode;
  f.survival = r.survival;
  f.recovery = r.recovery;
  if (r.input_cost_usd && !std::isnan(*r.input_cost_usd)) f.cost = *r.input_cost_usd;
  f.usage_present = r.usage_present;
  f.fail_open = r.fail_open;
  // The column holds the names joined by '\n': "" only for none or one "".
  f.recalled = r.recalled.size() > 1 || (r.recalled.size() == 1 && !r.recalled.front().empty());
  f.tokens_before = r.tokens_before;
  f.tokens_after = r.tokens_after;
  f.prompt = r.prompt_tokens;
  f.completion = r.completion_tokens;
  f.cached_read = r.cached_read_tokens;
  f.cache_write = r.cache_write_tokens;
  f.rereads = r.rereads;
  f.recall_rounds = r.recall_rounds;
  f.context_errors = r.context_errors;
  f.status = r.status;
  f.wait_ms = r.wait_ms;
  return f;
}

void RowFeed::committed(std::span<const LedgerRow> rows, std::int64_t last_id) {
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard lock(mutex_);
  if (!taken_ || now - *taken_ > kIdle) {  // nobody reads: keep nothing
    std::vector<FedRow>().swap(rows_);
    taken_.reset();
    return;
  }
  if (rows_.size() + rows.size() > kMaxRows) return;  // the reader reads these from SQLite
  std::int64_t id = last_id - static_cast<std::int64_t>(rows.size());
  for (const LedgerRow& r : rows) rows_.push_back(fed_row(r, ++id));
}

std::vector<FedRow> RowFeed::take() {
  std::vector<FedRow> out;
  std::lock_guard lock(mutex_);
  taken_ = std::chrono::steady_clock::now();
  out.swap(rows_);
  return out;
}

}  // namespace td::ledger
