#include "proxy/filters/ledger_filter.hpp"

#include <cmath>
#include <cstdio>

#include "config/match.hpp"
#include "ledger/usage_report.hpp"
#include "proxy/reports/reports.hpp"
#include "proxy/telemetry/process_state.hpp"
#include "pruning/mode.hpp"

namespace td::proxy {
namespace {

// Holds a request in the in-flight gauge from its request phase until its
// context is destroyed: that happens on every path, including the ones that
// end without a logging phase (client gone mid-body, body over the limit).
struct InFlightMark {
  explicit InFlightMark(Metrics& m) : metrics(m) { metrics.started(); }
  InFlightMark(const InFlightMark&) = delete;
  InFlightMark& operator=(const InFlightMark&) = delete;
  ~InFlightMark() { metrics.finished(); }
  Metrics& metrics;
};

std::int64_t to_i64(std::uint64_t v) {
  return v > static_cast<std::uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<std::int64_t>(v);
}

}  // namespace

ledger::LedgerRow ledger_row(const RequestContext& ctx, const config::Config* config) {
  ledger::LedgerRow r;
  r.time_ms = std::chrono::duration_cast<std::chrono::milliseconds>(ctx.wall_start.time_since_epoch()).count();
  r.request_id = std::to_string(ctx.request_id);
  r.session = ctx.session_id;
  r.key_fingerprint = ctx.key_fingerprint;
  r.provider =
      ctx.provider == Provider::other && !ctx.upstream.empty() ? ctx.upstream : std::string(to_string(ctx.provider));
  r.model = ctx.model;
  if (const DietReport* diet = ctx.objects.find<DietReport>()) {
    r.profile = diet->profile;
    r.mode = pruning::mode_name(diet->mode);
    r.tokens_before = to_i64(diet->tokens_before);
    r.tokens_after = to_i64(diet->tokens_after);
    r.strategies.assign(diet->strategies.begin(), diet->strategies.end());
    r.arm = pruning::arm_name(diet->arm);
    r.tokens_diet = to_i64(diet->tokens_diet);
    r.rereads = diet->rereads;
    if (diet->session_key) {
      char hex[17];
      std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(diet->session_key));
      r.session_key = hex;
    }
  }
  if (const BilledUsage* billed = ctx.objects.find<BilledUsage>()) {
    const providers::Usage& u = billed->usage;
    r.prompt_tokens = to_i64(u.prompt);
    r.completion_tokens = to_i64(u.completion);
    r.cached_read_tokens = to_i64(u.cached_read);
    r.cache_write_tokens = to_i64(u.cache_write);
    r.reasoning_tokens = to_i64(u.reasoning);
    r.usage_present = u.present;
    if (const config::Price* price = config && u.present ? config::price_for(*config, ctx.model) : nullptr)
      r.input_cost_usd =
          ledger::actual_cost_usd(*price, r.prompt_tokens, r.cached_read_tokens, r.cache_write_tokens, 0);
  }
  r.status = static_cast<int>(ctx.status);
  r.ttfb_ms = ctx.ttfb_ms < 0 ? -1 : std::llround(ctx.ttfb_ms);
  r.total_ms = std::llround(std::max(ctx.total_ms, 0.0));
  r.stream = ctx.stream;
  r.fail_open = ctx.fail_open;
  r.bytes_in = to_i64(ctx.bytes_in);
  r.bytes_out = to_i64(ctx.bytes_out);
  if (const EvictionReport* eviction = ctx.objects.find<EvictionReport>()) r.evicted_tasks = eviction->evicted_tasks;
  if (const QuotaReport* quota = ctx.objects.find<QuotaReport>()) {
    r.survival = quota->survival;
    r.quota_group = std::string(quota->quota_group);
    r.runway_tokens = quota->runway_tokens;
  }
  r.wait_ms = ctx.delay_upstream.count();
  // Context-length errors the upstream answered: the one recovery saw (the
  // failure phase), and the final answer's when it is another one (a retry's).
  const RecoveryReport* recovery = ctx.objects.find<RecoveryReport>();
  if (recovery) r.recovery = recovery->outcome;
  const BilledUsage* final_answer = ctx.objects.find<BilledUsage>();
  const bool final_overflow = final_answer && final_answer->context_length_exceeded;
  r.context_errors = (recovery ? 1 : 0) + (final_overflow && (!recovery || recovery->outcome == "retried") ? 1 : 0);
  if (const RecallReport* recall = ctx.objects.find<RecallReport>()) {
    r.recalled = recall->recalled;
    r.recall_rounds = recall->rounds;
  }
  return r;
}

FilterResult LedgerFilter::request_filter(RequestContext& ctx, HeaderMap&) {
  if (!ctx.objects.find<InFlightMark>()) ctx.objects.publish<InFlightMark>(process_.metrics());
  return {};
}

void LedgerFilter::logging(const RequestContext& ctx) {
  if (ctx.objects.find<OwnEndpoint>()) return;  // the dashboard's polls are no traffic
  ledger::LedgerRow row = ledger_row(ctx, config_.get());
  process_.metrics().record(row);
  if (ledger::Ledger* ledger = process_.ledger()) {
    ledger->submit(std::move(row));
    process_.maybe_save_calibration(std::chrono::steady_clock::now());
  }
}

}  // namespace td::proxy
