#include "proxy/telemetry/metrics.hpp"

#include <array>
#include <cinttypes>
#include <cstdio>

namespace td::proxy {

namespace {

// Seconds-scale buckets for LLM calls: a cached short answer is ~100 ms, a
// long reasoning stream minutes.
const std::vector<std::uint32_t> kTotalBoundsMs = {100,   250,   500,   1000,   2500,   5000,
                                                   10000, 30000, 60000, 120000, 300000, 600000};
// Time to first byte: provider queueing plus prompt processing.
const std::vector<std::uint32_t> kTtfbBoundsMs = {25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 120000};

constexpr std::array<std::string_view, 6> kStatusClasses = {"1xx", "2xx", "3xx", "4xx", "5xx", "none"};
constexpr char kKeySep = '\x1f';  // provider <US> model: neither contains it in practice
// The modes and survival outcomes counted per provider and model
// (pruning::mode_name, pruning::outcome_name).
constexpr std::array<std::string_view, 4> kModes = {"none", "standard", "survival", "semantic"};
constexpr std::array<std::string_view, 4> kSurvivalOutcomes = {"compressed", "waited", "rejected", "too_large"};
// Context-overflow recovery's outcomes (proxy/filters/recovery_filter.hpp).
constexpr std::array<std::string_view, 2> kRecoveryOutcomes = {"retried", "no_fit"};
// The arms (pruning/control_arm.hpp), as the ledger's arm column names them.
constexpr std::array<std::string_view, 3> kArms = {"treatment", "control", "shadow"};

template <std::size_t N>
std::size_t index_of(const std::array<std::string_view, N>& names, std::string_view name) {
  return static_cast<std::size_t>(std::find(names.begin(), names.end(), name) - names.begin());
}
constexpr std::string_view kOverflowModel = "_other_";

std::size_t status_index(int status) {
  if (status >= 100 && status <= 599) return static_cast<std::size_t>(status / 100 - 1);
  return 5;
}

std::uint64_t clamp_u(std::int64_t v) { return v > 0 ? static_cast<std::uint64_t>(v) : 0; }

std::string seconds(std::uint64_t ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%" PRIu64 ".%03" PRIu64, ms / 1000, ms % 1000);
  // Trim trailing zeros for readability: "0.250" -> "0.25", "1.000" -> "1".
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

std::string escape_help(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

void header(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += escape_help(help);
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

void sample(std::string& out, std::string_view name, std::string_view labels, std::string_view value) {
  out += name;
  if (!labels.empty()) {
    out += '{';
    out += labels;
    out += '}';
  }
  out += ' ';
  out += value;
  out += '\n';
}

}  // namespace

std::string_view status_class(int status) { return kStatusClasses[status_index(status)]; }

std::string escape_label_value(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

LatencyHistogram::LatencyHistogram(std::vector<std::uint32_t> bounds_ms)
    : bounds_(std::move(bounds_ms)), buckets_(new std::atomic<std::uint64_t>[bounds_.size() + 1]) {
  for (std::size_t i = 0; i <= bounds_.size(); ++i) buckets_[i].store(0);
}

void LatencyHistogram::observe(std::int64_t ms) {
  std::uint64_t v = clamp_u(ms);
  std::size_t i = std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin();
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  sum_ms_.fetch_add(v, std::memory_order_relaxed);
}

std::vector<std::uint64_t> LatencyHistogram::cumulative() const {
  std::vector<std::uint64_t> out(bounds_.size() + 1);
  std::uint64_t run = 0;
  for (std::size_t i = 0; i <= bounds_.size(); ++i) {
    run += buckets_[i].load(std::memory_order_relaxed);
    out[i] = run;
  }
  return out;
}

struct Metrics::ModelSeries {
  std::array<std::atomic<std::uint64_t>, kStatusClasses.size()> requests{};
  std::atomic<std::uint64_t> tokens_in{0}, tokens_sent{0}, tokens_saved{0};
  std::atomic<std::uint64_t> prompt{0}, completion{0}, cached_read{0}, cache_write{0}, reasoning{0};
  std::atomic<std::uint64_t> fail_open{0};
  std::array<std::atomic<std::uint64_t>, kModes.size()> by_mode{};
  std::array<std::atomic<std::uint64_t>, kSurvivalOutcomes.size()> survival{};
  std::atomic<std::uint64_t> wait_ms{0};
  std::array<std::atomic<std::uint64_t>, kRecoveryOutcomes.size()> recovery{};
  std::atomic<std::uint64_t> recalls{0}, recall_rounds{0};
  std::array<std::atomic<std::uint64_t>, kArms.size()> by_arm{}, diet_saved{};
  std::atomic<std::uint64_t> rereads{0}, context_errors{0};
  LatencyHistogram total{kTotalBoundsMs};
  LatencyHistogram ttfb{kTtfbBoundsMs};
};

Metrics::Metrics() : models_(kMaxModelSeries), modes_(kMaxModeSeries), runways_(kMaxModelSeries) {}
Metrics::~Metrics() = default;

void Metrics::record(const ledger::LedgerRow& row) {
  std::string key;
  key.reserve(row.provider.size() + 1 + row.model.size());
  key += row.provider;
  key += kKeySep;
  key += row.model;
  ModelSeries* found = models_.find(key);
  ModelSeries& s = found ? *found : models_.insert(key, row.provider + kKeySep + std::string(kOverflowModel));
  constexpr auto relaxed = std::memory_order_relaxed;
  s.tokens_in.fetch_add(clamp_u(row.tokens_before), relaxed);
  s.tokens_sent.fetch_add(clamp_u(row.tokens_after), relaxed);
  s.tokens_saved.fetch_add(clamp_u(row.tokens_saved()), relaxed);
  s.prompt.fetch_add(clamp_u(row.prompt_tokens), relaxed);
  s.completion.fetch_add(clamp_u(row.completion_tokens), relaxed);
  s.cached_read.fetch_add(clamp_u(row.cached_read_tokens), relaxed);
  s.cache_write.fetch_add(clamp_u(row.cache_write_tokens), relaxed);
  s.reasoning.fetch_add(clamp_u(row.reasoning_tokens), relaxed);
  if (row.fail_open) s.fail_open.fetch_add(1, relaxed);
  if (row.status != 0) s.total.observe(row.total_ms);  // an aborted request has no latency
  if (row.ttfb_ms >= 0) s.ttfb.observe(row.ttfb_ms);   // -1: no byte reached the client
  modes_.get(row.mode.empty() ? "none" : row.mode, kOverflowModel).requests.fetch_add(1, relaxed);
  if (std::size_t m = index_of(kModes, row.mode.empty() ? "none" : row.mode); m < kModes.size())
    s.by_mode[m].fetch_add(1, relaxed);
  if (std::size_t o = index_of(kSurvivalOutcomes, row.survival); o < kSurvivalOutcomes.size())
    s.survival[o].fetch_add(1, relaxed);
  if (row.wait_ms > 0) s.wait_ms.fetch_add(clamp_u(row.wait_ms), relaxed);
  if (std::size_t o = index_of(kRecoveryOutcomes, row.recovery); o < kRecoveryOutcomes.size())
    s.recovery[o].fetch_add(1, relaxed);
  if (!row.recalled.empty()) s.recalls.fetch_add(row.recalled.size(), relaxed);
  if (row.recall_rounds) s.recall_rounds.fetch_add(row.recall_rounds, relaxed);
  if (std::size_t a = index_of(kArms, row.arm); a < kArms.size()) {
    s.by_arm[a].fetch_add(1, relaxed);
    // What the diet would have saved, sent or not (tokens_saved_total counts what was).
    if (row.tokens_before > row.tokens_diet)
      s.diet_saved[a].fetch_add(clamp_u(row.tokens_before - row.tokens_diet), relaxed);
  }
  if (row.rereads) s.rereads.fetch_add(row.rereads, relaxed);
  if (row.context_errors) s.context_errors.fetch_add(row.context_errors, relaxed);
  if (row.runway_tokens && !row.quota_group.empty()) {
    key.resize(row.provider.size() + 1);  // "provider <US>" again
    key += row.quota_group;
    RunwaySeries* r = runways_.find(key);
    if (!r) r = &runways_.insert(key, row.provider + kKeySep + std::string(kOverflowModel));
    r->tokens.store(*row.runway_tokens, relaxed);
  }
  // Counted last, so a scrape that counts the request has its tokens too.
  s.requests[status_index(row.status)].fetch_add(1, std::memory_order_release);
}

void Metrics::add_counter(std::string name, std::string help, std::function<std::uint64_t()> read) {
  std::lock_guard lock(external_mu_);
  external_.push_back({std::move(name), std::move(help), "counter",
                       [read = std::move(read)] { return static_cast<std::int64_t>(read()); }});
}

void Metrics::add_gauge(std::string name, std::string help, std::function<std::int64_t()> read) {
  std::lock_guard lock(external_mu_);
  external_.push_back({std::move(name), std::move(help), "gauge", std::move(read)});
}

std::string Metrics::render() const {
  std::string out;
  out.reserve(16 << 10);

  // The labels of each model series, computed once per render.
  struct Row {
    std::string labels;
    const ModelSeries* s;
  };
  std::vector<Row> rows;
  models_.for_each([&](std::string_view key, const ModelSeries& s) {
    std::size_t sep = key.find(kKeySep);
    std::string labels = "provider=\"" + escape_label_value(key.substr(0, sep)) + "\",model=\"" +
                         escape_label_value(key.substr(sep + 1)) + "\"";
    rows.push_back({std::move(labels), &s});
  });

  header(out, "tokendiet_requests_total", "counter",
         "Requests answered, by provider, model and HTTP status class (none: no response).");
  for (const Row& r : rows)
    for (std::size_t i = 0; i < kStatusClasses.size(); ++i) {
      std::uint64_t n = r.s->requests[i].load(std::memory_order_acquire);
      if (n == 0) continue;  // keep the page short: classes never seen are absent
      sample(out, "tokendiet_requests_total", r.labels + ",status_class=\"" + std::string(kStatusClasses[i]) + "\"",
             std::to_string(n));
    }

  using Field = std::atomic<std::uint64_t> ModelSeries::*;
  struct Counter {
    const char* name;
    Field field;
    const char* help;
  };
  static const Counter kCounters[] = {
      {"tokendiet_tokens_in_total", &ModelSeries::tokens_in,
       "Prompt tokens as clients sent them (tokendiet's count, before pruning)."},
      {"tokendiet_tokens_sent_total", &ModelSeries::tokens_sent,
       "Prompt tokens forwarded upstream (tokendiet's count, after pruning; shadow and control: as the client sent "
       "them)."},
      {"tokendiet_tokens_saved_total", &ModelSeries::tokens_saved,
       "Prompt tokens pruning removed from what went upstream (in minus sent)."},
      {"tokendiet_rereads_total", &ModelSeries::rereads,
       "File reads of a path the session had already read (counted in each request's newest assistant message)."},
      {"tokendiet_context_errors_total", &ModelSeries::context_errors,
       "Context-length errors the upstream answered (recovered or not)."},
      {"tokendiet_upstream_prompt_tokens_total", &ModelSeries::prompt,
       "Prompt tokens the upstream billed, cache reads and writes included."},
      {"tokendiet_upstream_completion_tokens_total", &ModelSeries::completion,
       "Completion tokens the upstream billed, reasoning included."},
      {"tokendiet_upstream_cached_tokens_total", &ModelSeries::cached_read,
       "Prompt tokens the upstream served from its prompt cache."},
      {"tokendiet_upstream_cache_write_tokens_total", &ModelSeries::cache_write,
       "Prompt tokens the upstream wrote to its prompt cache."},
      {"tokendiet_upstream_reasoning_tokens_total", &ModelSeries::reasoning,
       "Completion tokens the upstream reported as reasoning/thinking."},
      {"tokendiet_fail_open_total", &ModelSeries::fail_open,
       "Requests forwarded unchanged because parsing or pruning failed."},
      {"tokendiet_recalls_total", &ModelSeries::recalls,
       "tokendiet_recall calls the proxy answered from the archive (docs/design.md §Recall)."},
      {"tokendiet_recall_rounds_total", &ModelSeries::recall_rounds,
       "Continuation rounds the recall loop sent upstream (one per answer that called tokendiet_recall)."},
  };
  for (const Counter& c : kCounters) {
    header(out, c.name, "counter", c.help);
    for (const Row& r : rows)
      sample(out, c.name, r.labels, std::to_string((r.s->*c.field).load(std::memory_order_relaxed)));
  }

  header(out, "tokendiet_mode_total", "counter", "Requests by the pruning mode that applied.");
  modes_.for_each([&](std::string_view mode, const ModeSeries& m) {
    sample(out, "tokendiet_mode_total", "mode=\"" + escape_label_value(mode) + "\"",
           std::to_string(m.requests.load(std::memory_order_relaxed)));
  });

  // A counter per provider, model and one more label, for each of `names`.
  auto per_name = [&](const char* name, const char* help, std::string_view label, auto names, auto member) {
    header(out, name, "counter", help);
    for (const Row& r : rows)
      for (std::size_t i = 0; i < names.size(); ++i)
        if (std::uint64_t n = (r.s->*member)[i].load(std::memory_order_relaxed))
          sample(out, name, r.labels + "," + std::string(label) + "=\"" + std::string(names[i]) + "\"",
                 std::to_string(n));
  };
  per_name("tokendiet_mode_requests_total",
           "Requests by provider, model and the mode that applied (none, standard, survival, semantic).", "mode",
           kModes, &ModelSeries::by_mode);
  per_name("tokendiet_survival_total",
           "Survival mode's outcomes: compressed (sent at a harder level), waited (held for the runway), "
           "rejected (answered 429), too_large (over a whole window: sent as the diet left it).",
           "outcome", kSurvivalOutcomes, &ModelSeries::survival);
  header(out, "tokendiet_survival_wait_seconds_total", "counter", "Time requests were held for the TPM runway.");
  for (const Row& r : rows)
    if (std::uint64_t ms = r.s->wait_ms.load(std::memory_order_relaxed))
      sample(out, "tokendiet_survival_wait_seconds_total", r.labels, seconds(ms));
  per_name("tokendiet_recovery_total",
           "Context-overflow recovery after an upstream context-length error: retried (sent once more, "
           "compressed to fit), no_fit (no level fits: the upstream's error relayed).",
           "outcome", kRecoveryOutcomes, &ModelSeries::recovery);
  per_name("tokendiet_arm_requests_total",
           "Requests the diet read, by arm: treatment (dieted), control (a control-arm session, sent as it came "
           "unless survival or recovery cut it), shadow (a shadow profile, sent as it came).",
           "arm", kArms, &ModelSeries::by_arm);
  per_name("tokendiet_diet_tokens_saved_total",
           "Prompt tokens the diet removed or would have removed, by arm (control and shadow: computed, not sent; "
           "the treatment's equal tokendiet_tokens_saved_total's share of it).",
           "arm", kArms, &ModelSeries::diet_saved);
  header(out, "tokendiet_runway_tokens", "gauge",
         "Tokens the tightest per-minute limit of a provider and quota group held after its latest request.");
  runways_.for_each([&](std::string_view key, const RunwaySeries& g) {
    const std::size_t sep = key.find(kKeySep);
    sample(out, "tokendiet_runway_tokens",
           "provider=\"" + escape_label_value(key.substr(0, sep)) + "\",quota_group=\"" +
               escape_label_value(key.substr(sep + 1)) + "\"",
           std::to_string(g.tokens.load(std::memory_order_relaxed)));
  });

  using Hist = LatencyHistogram ModelSeries::*;
  struct Histogram {
    const char* name;
    Hist field;
    const char* help;
  };
  static const Histogram kHistograms[] = {
      {"tokendiet_request_duration_seconds", &ModelSeries::total,
       "Time from request arrival to the last response byte."},
      {"tokendiet_time_to_first_byte_seconds", &ModelSeries::ttfb,
       "Time from request arrival to the first response byte."},
  };
  for (const Histogram& h : kHistograms) {
    header(out, h.name, "histogram", h.help);
    std::string bucket = std::string(h.name) + "_bucket";
    for (const Row& r : rows) {
      const LatencyHistogram& hist = r.s->*h.field;
      std::vector<std::uint64_t> cum = hist.cumulative();
      const auto& bounds = hist.bounds_ms();
      for (std::size_t i = 0; i < bounds.size(); ++i)
        sample(out, bucket, r.labels + ",le=\"" + seconds(bounds[i]) + "\"", std::to_string(cum[i]));
      sample(out, bucket, r.labels + ",le=\"+Inf\"", std::to_string(cum.back()));
      sample(out, std::string(h.name) + "_sum", r.labels, seconds(hist.sum_ms()));
      sample(out, std::string(h.name) + "_count", r.labels, std::to_string(cum.back()));
    }
  }

  header(out, "tokendiet_requests_in_flight", "gauge", "Requests being served right now.");
  sample(out, "tokendiet_requests_in_flight", "", std::to_string(in_flight()));

  std::lock_guard lock(external_mu_);
  for (const External& e : external_) {
    header(out, e.name, e.type, e.help);
    sample(out, e.name, "", std::to_string(e.read()));
  }
  return out;
}

}  // namespace td::proxy
