#include "ledger/row_feed.hpp"

#include <array>
#include <cmath>
#include <cstring>
#include <functional>

namespace td::ledger {

std::size_t request_id_hash(std::string_view request_id) { return std::hash<std::string_view>{}(request_id); }

FedChunk fed_chunk(std::span<const LedgerRow> rows, std::int64_t last_id) {
  auto texts = [](const LedgerRow& r) {
    return std::array<const std::string*, 8>{&r.session_key,     &r.session, &r.model,    &r.arm,
                                             &r.key_fingerprint, &r.mode,    &r.survival, &r.recovery};
  };
  std::size_t size = 0;
  for (const LedgerRow& r : rows)
    for (const std::string* t : texts(r)) size += t->size();
  FedChunk c{std::make_unique_for_overwrite<char[]>(size), {}};
  c.rows.reserve(rows.size());
  char* at = c.text.get();
  std::int64_t id = last_id - static_cast<std::int64_t>(rows.size());
  for (const LedgerRow& r : rows) {
    FedRow& f = c.rows.emplace_back();
    std::string_view* views[] = {&f.session_key,     &f.session, &f.model,    &f.arm,
                                 &f.key_fingerprint, &f.mode,    &f.survival, &f.recovery};
    std::size_t k = 0;
    for (const std::string* t : texts(r)) {
      std::memcpy(at, t->data(), t->size());
      *views[k++] = std::string_view(at, t->size());
      at += t->size();
    }
    f.id = ++id;
    f.time_ms = r.time_ms;
    f.request_id = request_id_hash(r.request_id);
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
  }
  return c;
}

void RowFeed::committed(std::span<const LedgerRow> rows, std::int64_t last_id) {
  const auto now = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(mutex_);
    if (!taken_ || now - *taken_ > kIdle) {  // nobody reads: keep nothing
      std::vector<FedChunk>().swap(chunks_);
      rows_ = 0;
      taken_.reset();
      return;
    }
    if (rows_ + rows.size() > kMaxRows) return;  // the reader reads these from SQLite
  }
  FedChunk c = fed_chunk(rows, last_id);  // outside the lock: the reader never waits for it
  std::lock_guard lock(mutex_);
  rows_ += rows.size();
  chunks_.push_back(std::move(c));
}

std::vector<FedChunk> RowFeed::take() {
  std::vector<FedChunk> out;
  std::lock_guard lock(mutex_);
  taken_ = std::chrono::steady_clock::now();
  out.swap(chunks_);
  rows_ = 0;
  return out;
}

}  // namespace td::ledger
