#include "ledger/arm_comparison.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

namespace td::ledger {

namespace {

// One session's outcome in one group (a model, or the total).
struct Outcome {
  double requests = 0, cost = 0, rereads = 0, recalls = 0, context_errors = 0, rate_limited = 0;
};

struct Totals {
  double sessions = 0, requests = 0, cost = 0, rereads = 0, recalls = 0, context_errors = 0, rate_limited = 0;
  void add(const Outcome& o) {
    sessions += 1;
    requests += o.requests;
    cost += o.cost;
    rereads += o.rereads;
    recalls += o.recalls;
    context_errors += o.context_errors;
    rate_limited += o.rate_limited;
  }
};

double figure(const Totals& t, ArmFigure f) {
  const double per100 = t.requests > 0 ? 100.0 / t.requests : 0;
  switch (f) {
    case ArmFigure::RequestsPerSession:
      return t.sessions > 0 ? t.requests / t.sessions : 0;
    case ArmFigure::CostPerSession:
      return t.sessions > 0 ? t.cost / t.sessions : 0;
    case ArmFigure::CostPerRequest:
      return t.requests > 0 ? t.cost / t.requests : 0;
    case ArmFigure::RereadsPer100:
      return t.rereads * per100;
    case ArmFigure::RecallsPer100:
      return t.recalls * per100;
    case ArmFigure::ContextErrorsPer100:
      return t.context_errors * per100;
    case ArmFigure::RateLimitedPer100:
      return t.rate_limited * per100;
  }
  return 0;
}

// The treatment against the control: relative (%) or in points; NaN when a
// relative difference has nothing to be relative to.
double difference(ArmFigure f, double treatment, double control) {
  if (!arm_figure_relative(f)) return treatment - control;
  return control > 0 ? (treatment / control - 1) * 100 : std::nan("");
}

// splitmix64: a fixed, portable sequence (std's distributions are not the
// same on every standard library), and an index below n from it.
struct Rng {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  std::size_t below(std::size_t n) {
    return static_cast<std::size_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
  }
};

Totals resample(const std::vector<Outcome>& arm, Rng& rng) {
  Totals t;
  for (std::size_t i = 0; i < arm.size(); ++i) t.add(arm[rng.below(arm.size())]);
  return t;
}

// The 2.5th and 97.5th percentiles of `v` (NaNs left out; unknown if over
// a twentieth of the resamples had none).
Interval percentiles(std::vector<double> v, double value) {
  const std::size_t all = v.size();
  std::erase_if(v, [](double x) { return std::isnan(x); });
  Interval out{value, 0, 0, false};
  if (v.empty() || std::isnan(value) || v.size() * 20 < all * 19) return out;
  std::sort(v.begin(), v.end());
  auto at = [&](double p) { return v[static_cast<std::size_t>(std::llround(p * double(v.size() - 1)))]; };
  out.low = at(0.025);
  out.high = at(0.975);
  out.known = true;
  return out;
}

std::string number(const char* format, double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string sentence(const ArmGroup& g) {
  const std::string sessions = std::to_string(g.treatment.sessions) + " treatment and " +
                               std::to_string(g.control.sessions) + " control sessions";
  if (g.control.sessions < 2 || g.treatment.sessions < 2)
    return "Not enough sessions to compare (" + sessions +
           "; two per arm at least): set control_fraction in a profile and let traffic run.";
  const Interval& d = g.difference[static_cast<std::size_t>(ArmFigure::CostPerSession)];
  if (!d.known)
    return "No cost to compare over " + sessions +
           ": the control's sessions cost nothing priced (set prices in the config).";
  const bool lower = d.value < 0;
  std::string out;
  if (d.high < 0 || d.low > 0) {
    out = "Resolved: the treatment's effective input cost per session is " + number("%.1f", std::fabs(d.value)) +
          " % " + (lower ? "lower" : "higher") + " than the control's (95 % interval " + number("%+.1f", d.low) +
          " % to " + number("%+.1f", d.high) + " %), over " + sessions + ".";
  } else {
    out = "Not resolved: the effective input cost per session differs by " + number("%+.1f", d.value) +
          " % (95 % interval " + number("%+.1f", d.low) + " % to " + number("%+.1f", d.high) +
          " %, which includes no difference) over " + sessions + "; more sessions narrow it.";
  }
  const Interval& r = g.difference[static_cast<std::size_t>(ArmFigure::RereadsPer100)];
  if (r.known && (r.high < 0 || r.low > 0))
    out += " Re-reads per 100 requests: " + number("%+.1f", r.value) + " (resolved).";
  if (g.treatment.unpriced_requests + g.control.unpriced_requests > 0)
    out += " Costs leave out " + std::to_string(g.treatment.unpriced_requests + g.control.unpriced_requests) +
           " requests without a price.";
  return out;
}

ArmGroup compare_group(std::string key, const std::vector<Outcome>& treatment, const std::vector<Outcome>& control,
                       ArmSums ts, ArmSums cs, const CompareOptions& options) {
  ArmGroup g;
  g.key = std::move(key);
  g.treatment = ts;
  g.control = cs;
  Totals t, c;
  for (const Outcome& o : treatment) t.add(o);
  for (const Outcome& o : control) c.add(o);
  const bool enough = treatment.size() >= 2 && control.size() >= 2;
  std::array<std::array<std::vector<double>, kArmFigures>, 3> samples;  // treatment, control, difference
  if (enough) {
    Rng rng{options.seed};
    for (auto& arm : samples)
      for (auto& v : arm) v.reserve(options.resamples);
    for (int b = 0; b < options.resamples; ++b) {
      const Totals tb = resample(treatment, rng), cb = resample(control, rng);
      for (std::size_t f = 0; f < kArmFigures; ++f) {
        const double tv = figure(tb, ArmFigure(f)), cv = figure(cb, ArmFigure(f));
        samples[0][f].push_back(tv);
        samples[1][f].push_back(cv);
        samples[2][f].push_back(difference(ArmFigure(f), tv, cv));
      }
    }
  }
  for (std::size_t f = 0; f < kArmFigures; ++f) {
    const double tv = figure(t, ArmFigure(f)), cv = figure(c, ArmFigure(f));
    g.treatment_figures[f] = enough ? percentiles(samples[0][f], tv) : Interval{tv, 0, 0, false};
    g.control_figures[f] = enough ? percentiles(samples[1][f], cv) : Interval{cv, 0, 0, false};
    const double dv = difference(ArmFigure(f), tv, cv);
    g.difference[f] = enough ? percentiles(samples[2][f], dv) : Interval{dv, 0, 0, false};
  }
  g.sentence = sentence(g);
  return g;
}

void add_sums(ArmSums& a, const SessionSums& s, bool priced) {
  a.requests += s.requests;
  a.rereads += s.rereads;
  a.recall_rounds += s.recall_rounds;
  a.context_errors += s.context_errors;
  a.rate_limited += s.rate_limited;
  if (!priced) a.unpriced_requests += s.unpriced;
}

}  // namespace

std::string_view arm_figure_name(ArmFigure f) {
  switch (f) {
    case ArmFigure::RequestsPerSession:
      return "requests_per_session";
    case ArmFigure::CostPerSession:
      return "cost_per_session_usd";
    case ArmFigure::CostPerRequest:
      return "cost_per_request_usd";
    case ArmFigure::RereadsPer100:
      return "rereads_per_100_requests";
    case ArmFigure::RecallsPer100:
      return "recall_rounds_per_100_requests";
    case ArmFigure::ContextErrorsPer100:
      return "context_errors_per_100_requests";
    case ArmFigure::RateLimitedPer100:
      return "rate_limited_per_100_requests";
  }
  return "";
}

bool arm_figure_relative(ArmFigure f) {
  return f == ArmFigure::RequestsPerSession || f == ArmFigure::CostPerSession || f == ArmFigure::CostPerRequest;
}

std::vector<SessionSums> merge_session_sums(std::vector<std::vector<SessionSums>> per_ledger) {
  if (per_ledger.size() == 1) return std::move(per_ledger.front());
  std::map<std::tuple<std::string, std::string, std::string>, SessionSums> merged;
  for (std::vector<SessionSums>& sums : per_ledger)
    for (SessionSums& u : sums) {
      auto [at, fresh] = merged.try_emplace({u.unit, u.model, u.arm}, u);
      if (fresh) continue;
      SessionSums& m = at->second;
      m.cost_usd += u.cost_usd;
      for (auto field : {&SessionSums::requests, &SessionSums::unpriced, &SessionSums::prompt,
                         &SessionSums::cached_read, &SessionSums::cache_write, &SessionSums::rereads,
                         &SessionSums::recall_rounds, &SessionSums::context_errors, &SessionSums::rate_limited})
        m.*field += u.*field;
    }
  std::vector<SessionSums> out;
  out.reserve(merged.size());
  for (auto& [key, u] : merged) out.push_back(std::move(u));
  return out;
}

ArmComparison compare_arms(const std::vector<SessionSums>& sessions, const PriceLookup& price_for,
                           const CompareOptions& options) {
  ArmComparison out;
  out.resamples = options.resamples;
  out.seed = options.seed;
  struct Arms {
    std::map<std::string, Outcome> treatment, control;  // by session
    ArmSums ts, cs;
  };
  std::map<std::string, Arms> by_model;
  Arms total;
  for (const SessionSums& s : sessions) {
    const config::Price* price = s.unpriced > 0 ? price_for(s.model) : nullptr;
    Outcome o{double(s.requests),
              s.cost_usd + (price ? actual_cost_usd(*price, s.prompt, s.cached_read, s.cache_write, 0) : 0),
              double(s.rereads),
              double(s.recall_rounds),
              double(s.context_errors),
              double(s.rate_limited)};
    const bool control = s.arm == "control";
    for (Arms* arms : {&by_model[s.model], &total}) {
      Outcome& acc = (control ? arms->control : arms->treatment)[s.unit];
      acc.requests += o.requests;
      acc.cost += o.cost;
      acc.rereads += o.rereads;
      acc.recalls += o.recalls;
      acc.context_errors += o.context_errors;
      acc.rate_limited += o.rate_limited;
      ArmSums& sums = control ? arms->cs : arms->ts;
      add_sums(sums, s, price != nullptr || s.unpriced == 0);
      sums.cost_usd += o.cost;
    }
  }
  auto finish = [&](const std::string& key, Arms& arms) {
    std::vector<Outcome> t, c;
    for (auto& [unit, o] : arms.treatment) t.push_back(o);
    for (auto& [unit, o] : arms.control) c.push_back(o);
    arms.ts.sessions = std::int64_t(t.size());
    arms.cs.sessions = std::int64_t(c.size());
    return compare_group(key, t, c, arms.ts, arms.cs, options);
  };
  for (auto& [model, arms] : by_model) out.groups.push_back(finish(model, arms));
  out.total = finish("total", total);
  return out;
}

}  // namespace td::ledger
