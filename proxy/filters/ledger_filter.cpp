#include "proxy/filters/ledger_filter.hpp"

#include <cmath>

#include "proxy/telemetry/telemetry.hpp"
#include "pruning/mode.hpp"

namespace td::proxy {
namespace {

// Holds a request in the in-flight gauge from its request phase until its
// context is destroyed: that happens on every path, including the ones that
// end without a logging phase (client gone mid-body, body over the limit).
struct InFlightMark : FilterState {
  explicit InFlightMark(Metrics& m) : metrics(m) { metrics.started(); }
  ~InFlightMark() override { metrics.finished(); }
  Metrics& metrics;
};

std::int64_t to_i64(std::uint64_t v) {
  return v > static_cast<std::uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<std::int64_t>(v);
}

}  // namespace

ledger::LedgerRow ledger_row(const RequestContext& ctx) {
  ledger::LedgerRow r;
  r.time_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                  ctx.wall_start.time_since_epoch())
                  .count();
  r.request_id = std::to_string(ctx.request_id);
  r.session = ctx.session_id;
  r.key_fingerprint = ctx.key_fingerprint;
  r.provider = ctx.provider == Provider::other && !ctx.upstream.empty()
                   ? ctx.upstream
                   : std::string(to_string(ctx.provider));
  r.model = ctx.model;
  r.profile = ctx.profile;
  if (ctx.mode) r.mode = pruning::mode_name(*ctx.mode);
  r.tokens_before = to_i64(ctx.tokens_before);
  r.tokens_after = to_i64(ctx.tokens_after);
  r.prompt_tokens = to_i64(ctx.usage.prompt);
  r.completion_tokens = to_i64(ctx.usage.completion);
  r.cached_read_tokens = to_i64(ctx.usage.cached_read);
  r.cache_write_tokens = to_i64(ctx.usage.cache_write);
  r.reasoning_tokens = to_i64(ctx.usage.reasoning);
  r.usage_present = ctx.usage.present;
  r.status = static_cast<int>(ctx.status);
  r.ttfb_ms = ctx.ttfb_ms < 0 ? -1 : std::llround(ctx.ttfb_ms);
  r.total_ms = std::llround(std::max(ctx.total_ms, 0.0));
  r.stream = ctx.stream;
  r.strategies.assign(ctx.strategies.begin(), ctx.strategies.end());
  r.fail_open = ctx.fail_open;
  r.bytes_in = to_i64(ctx.bytes_in);
  r.bytes_out = to_i64(ctx.bytes_out);
  r.evicted_tasks = ctx.evicted_tasks;
  r.survival = ctx.survival;
  r.wait_ms = ctx.delay_upstream.count();
  r.quota_group = std::string(ctx.quota_group);
  r.runway_tokens = ctx.runway_tokens;
  r.recovery = ctx.recovery;
  r.recalled = ctx.recalled;
  r.recall_rounds = ctx.recall_rounds;
  return r;
}

FilterResult LedgerFilter::request_filter(RequestContext& ctx, HeaderMap&) {
  if (ctx.filter_state.size() <= slot()) ctx.filter_state.resize(slot() + 1);
  auto& mark = ctx.filter_state[slot()];
  if (!mark) mark = std::make_unique<InFlightMark>(telemetry_.metrics());
  return {};
}

void LedgerFilter::logging(const RequestContext& ctx) {
  ledger::LedgerRow row = ledger_row(ctx);
  telemetry_.metrics().record(row);
  if (ledger::Ledger* ledger = telemetry_.ledger()) {
    ledger->submit(std::move(row));
    telemetry_.maybe_save_calibration(std::chrono::steady_clock::now());
  }
}

}  // namespace td::proxy
