#include "pruning/decision.hpp"

#include <algorithm>

namespace td::pruning {

namespace {

Level harder(Level l) { return l == Level::Standard ? Level::Window : Level::DropMiddle; }

// The runway left under which thinking is lowered: the profile's tokens, at
// most half the limit (at or above the limit it would always be lowered,
// even on an idle key), or the profile's fraction of the limit.
double thinking_threshold(const Profile& p, double limit) {
  if (p.thinking_budget_runway_fraction > 0) return p.thinking_budget_runway_fraction * limit;
  return std::min(double(p.thinking_budget_runway_tokens), limit / 2);
}

RunwayAsk scaled(RunwayAsk a, double k) { return {a.input * k, a.output * k}; }

}  // namespace

Decision decide(const Counted&, const Profile& profile) {
  Decision d;
  d.settings.profile = &profile;
  if (!profile.enabled) return d;
  d.mode = Mode::Standard;
  d.settings.write = !profile.shadow;
  if (profile.shadow) d.arm = Arm::Shadow;
  return d;
}

Mode reported_mode(Mode decided, bool tombstones_written) {
  return decided == Mode::Standard && tombstones_written ? Mode::Semantic : decided;
}

Decision decide(const PolicyInput& in, const LevelTokens& diet_tokens_at) {
  const Profile& p = *in.profile;
  Decision d = decide(*in.counted, p);
  d.memory = in.memory;
  if (d.mode == Mode::None || !d.settings.write) return d;
  if (in.control) {
    // The control arm: its diet's level is the request as sent, so the
    // runway is asked for what really goes; survival and recovery's memory
    // still cut (they keep the session alive), and then it is written.
    d.arm = Arm::Control;
    const LevelTokens as_sent = [&](Level l) {
      LevelCut cut = diet_tokens_at(l);
      if (l == Level::Standard) cut.tokens = in.counted->total;
      return cut;
    };
    PolicyInput treated = in;
    treated.control = false;
    Decision c = decide(treated, as_sent);
    c.arm = Arm::Control;
    if (c.settings.level == Level::Standard) {
      c.settings.write = false;  // sent as it came; the pipeline's result is what the diet would have sent
      c.lower_thinking = false;
      c.memory.thinking_lowered = false;
    }
    return c;
  }
  const LevelTokens& tokens_at = diet_tokens_at;
  const Runway& rw = in.runway;
  // A session that overflowed: the first level under what its retry fitted in.
  Level floor = Level::Standard;
  if (in.memory.fit_tokens)
    while (floor != kHardestLevel && tokens_at(floor).tokens > in.memory.fit_tokens) floor = harder(floor);
  d.settings.level = floor;
  if (!rw.known()) return d;

  if (p.thinking_budget) {
    const Runway::Left now = rw.left_after({});
    const double threshold = thinking_threshold(p, now.limit);
    d.memory.thinking_lowered = now.tokens < (in.memory.thinking_lowered ? 2 * threshold : threshold);
    d.lower_thinking = d.memory.thinking_lowered;
  }

  // What the request asks of the runway at a level: its prompt as the
  // provider counts it (cache reads it will not count are expected only at
  // the level the session was last sent at) and the output it reserves.
  auto ask_at = [&](Level l) {
    double prompt = double(tokens_at(l).tokens) * in.bill_ratio;
    if (l == in.memory.level) prompt -= in.cached_prefix;
    return RunwayAsk{std::max(prompt, 0.0), in.reserved_output};
  };
  const double margin = p.quota_margin;
  // A retry of the history that set the level is decided at that level.
  const bool latched = in.memory.level != Level::Standard && in.messages <= in.memory.latched_messages;
  if (!p.survival || tokens_at(latched ? in.memory.level : Level::Standard).turns < p.min_turns) {
    d.ask = ask_at(floor);
    d.left = rw.left_after(d.ask);
    d.memory.level = Level::Standard;
    return d;
  }

  // Where to start: the latched level, or the session's level while the
  // pressure lasts.
  Level level = Level::Standard;
  if (latched) {
    level = in.memory.level;
  } else if (in.memory.level != Level::Standard && !rw.holds(scaled(ask_at(Level::Standard), 2), margin)) {
    level = in.memory.level;
  }
  level = std::max(level, floor);
  RunwayAsk ask = ask_at(level);
  if (!latched) {
    while (!rw.holds(ask, margin) && level != kHardestLevel) {
      level = harder(level);
      ask = ask_at(level);
    }
  }

  d.settings.level = level;
  d.memory.level = level;
  if (level != in.memory.level) d.memory.latched_messages = in.messages;
  if (rw.holds(ask, margin)) {
    d.outcome = level == Level::Standard ? SurvivalOutcome::None : SurvivalOutcome::Compressed;
    d.ask = ask;
    d.left = rw.left_after(ask);
  } else if (rw.exceeds_limits(ask)) {
    // It never fits, whatever the wait: the diet's bytes go, and the
    // upstream's answer decides. Nothing is reserved; its bill is counted
    // when it comes.
    d.outcome = SurvivalOutcome::TooLarge;
    d.settings.level = floor;
    d.memory.level = Level::Standard;
    d.left = rw.left_after({});
  } else {
    const std::chrono::milliseconds wait = rw.wait_for(ask, margin);
    if (wait.count() <= std::int64_t(p.max_wait_ms)) {
      d.outcome = SurvivalOutcome::Waited;
      d.admission = {Admission::Kind::Wait, wait};
      d.ask = ask;
      d.left = rw.left_after(ask, wait);
    } else {
      d.outcome = SurvivalOutcome::Rejected;
      d.admission = {Admission::Kind::Reject, wait};
      d.left = rw.left_after({});
    }
  }
  if (d.outcome != SurvivalOutcome::None) d.mode = Mode::Survival;
  return d;
}

}  // namespace td::pruning
