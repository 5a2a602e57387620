#include "proxy/telemetry/log.hpp"

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <ctime>

#include "proxy/phases/json_text.hpp"
#include "proxy/phases/routing.hpp"
#include "proxy/reports/reports.hpp"
#include "pruning/strategy_stats.hpp"

namespace td::proxy {

namespace {

// "YYYY-MM-DDTHH:MM:SS" of the current second, formatted once per second per
// thread: a log line costs no gmtime/printf.
std::string_view second_text(std::time_t secs) {
  thread_local std::time_t cached = -1;
  thread_local char text[64];
  if (secs != cached) {
    std::tm tm{};
    gmtime_r(&secs, &tm);
    std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                  tm.tm_hour, tm.tm_min, tm.tm_sec);
    cached = secs;
  }
  return text;
}

void append_key(std::string& out, std::string_view key) {  // keys are our own literals: no escaping
  out.push_back(',');
  out.push_back('"');
  out.append(key);
  out.append("\":");
}

void append_uint(std::string& out, std::uint64_t v) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, end);
}

}  // namespace

LogLine::LogLine(std::string_view event) {
  out_.reserve(448);
  auto now = std::chrono::system_clock::now();
  auto ms_since_epoch = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  auto millis = static_cast<unsigned>(ms_since_epoch % 1000);
  out_ += R"({"ts":")";
  out_ += second_text(static_cast<std::time_t>(ms_since_epoch / 1000));
  char frac[6] = {'.',
                  static_cast<char>('0' + millis / 100),
                  static_cast<char>('0' + millis / 10 % 10),
                  static_cast<char>('0' + millis % 10),
                  'Z',
                  '"'};
  out_.append(frac, sizeof frac);
  out_ += R"(,"event":)";
  append_json_string(out_, event);
}

LogLine& LogLine::str(std::string_view key, std::string_view value) {
  append_key(out_, key);
  append_json_string(out_, value);
  return *this;
}

LogLine& LogLine::strs(std::string_view key, const std::vector<std::string>& values) {
  append_key(out_, key);
  out_.push_back('[');
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i) out_.push_back(',');
    append_json_string(out_, values[i]);
  }
  out_.push_back(']');
  return *this;
}

LogLine& LogLine::num(std::string_view key, std::uint64_t value) {
  append_key(out_, key);
  append_uint(out_, value);
  return *this;
}

LogLine& LogLine::ms(std::string_view key, double value) {
  append_key(out_, key);
  if (!(value >= 0) || value > 1e15) {  // negative or absurd: say so plainly, as printf would
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", value);
    out_ += buf;
    return *this;
  }
  auto micros = static_cast<std::uint64_t>(value * 1000.0 + 0.5);
  append_uint(out_, micros / 1000);
  unsigned f = static_cast<unsigned>(micros % 1000);
  char frac[4] = {'.', static_cast<char>('0' + f / 100), static_cast<char>('0' + f / 10 % 10),
                  static_cast<char>('0' + f % 10)};
  out_.append(frac, sizeof frac);
  return *this;
}

LogLine& LogLine::flag(std::string_view key, bool value) {
  append_key(out_, key);
  out_ += value ? "true" : "false";
  return *this;
}

const std::string& LogLine::text() {
  if (!closed_) {
    out_.push_back('}');
    closed_ = true;
  }
  return out_;
}

namespace {

void write_all(const char* p, std::size_t left) {
  while (left > 0) {
    ssize_t n = ::write(STDERR_FILENO, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // nowhere to report a broken stderr
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

thread_local std::string t_batch;
constexpr std::size_t kBatchBytes = 16 * 1024;

}  // namespace

void LogLine::emit() {
  text();
  out_.push_back('\n');
  flush_thread_log();  // keep this thread's earlier lines first
  write_all(out_.data(), out_.size());
  out_.pop_back();
}

bool LogLine::emit_batched() {
  const bool first = t_batch.empty();
  t_batch += text();
  t_batch.push_back('\n');
  if (t_batch.size() >= kBatchBytes) flush_thread_log();
  return first;
}

void flush_thread_log() {
  if (t_batch.empty()) return;
  write_all(t_batch.data(), t_batch.size());
  t_batch.clear();
}

LogLine access_line(const RequestContext& ctx) {
  LogLine l("request");
  l.num("id", ctx.request_id).str("method", ctx.method).str("path", redact_target(ctx.target));
  l.str("provider", to_string(ctx.provider));
  if (!ctx.upstream.empty()) l.str("upstream", ctx.upstream);
  if (!ctx.model.empty()) l.str("model", ctx.model);
  l.flag("stream", ctx.stream);
  l.num("status", ctx.status);
  l.num("bytes_in", ctx.bytes_in).num("bytes_upstream", ctx.bytes_upstream).num("bytes_out", ctx.bytes_out);
  if (ctx.ttfb_ms >= 0) l.ms("ttfb_ms", ctx.ttfb_ms);
  l.ms("ms", ctx.total_ms);
  if (!ctx.session_id.empty()) l.str("session", ctx.session_id);
  if (!ctx.key_fingerprint.empty()) l.str("key", ctx.key_fingerprint);
  if (ctx.local_response) l.flag("local", true);
  if (ctx.upstream_error) l.flag("upstream_error", true);
  if (ctx.client_aborted) l.flag("client_aborted", true);
  if (!ctx.error.empty()) l.str("error", ctx.error);
  if (ctx.fail_open) l.flag("fail_open", true).str("fail_open_reason", ctx.fail_open_reason);
  if (const ProfileChoice* chosen = ctx.objects.find<ProfileChoice>()) l.str("profile_header", chosen->name);
  const DietReport* diet = ctx.objects.find<DietReport>();
  const QuotaReport* quota = ctx.objects.find<QuotaReport>();
  const EvictionReport* eviction = ctx.objects.find<EvictionReport>();
  if (diet) {
    if (!diet->profile.empty()) l.str("profile", diet->profile);
    l.str("mode", pruning::mode_name(diet->mode));
    if (!diet->reason.empty()) l.str("mode_reason", diet->reason);
    if (diet->tokens_before || diet->tokens_after)
      l.num("tokens_before", diet->tokens_before).num("tokens_after", diet->tokens_after);
    // Shadow and control sent the request as it came: what the diet would have sent.
    if (diet->arm != pruning::Arm::Treatment)
      l.str("arm", pruning::arm_name(diet->arm)).num("tokens_diet", diet->tokens_diet);
    if (diet->rereads) l.num("rereads", std::uint64_t(diet->rereads));
    if (!diet->strategies.empty()) l.str("strategies", pruning::join_names(diet->strategies));
  }
  if (eviction && !eviction->evicted_tasks.empty()) l.strs("evicted_tasks", eviction->evicted_tasks);
  if (eviction && !eviction->archive_error.empty()) l.str("archive_error", eviction->archive_error);
  if (quota && !quota->survival.empty()) l.str("survival", quota->survival);
  if (ctx.delay_upstream.count() > 0) l.num("wait_ms", std::uint64_t(ctx.delay_upstream.count()));
  if (quota && quota->runway_tokens)
    l.str("quota_group", quota->quota_group).num("runway_tokens", std::uint64_t(*quota->runway_tokens));
  if (diet && !diet->thinking.empty()) l.str("thinking", diet->thinking);
  if (const RecoveryReport* recovery = ctx.objects.find<RecoveryReport>(); recovery && !recovery->outcome.empty())
    l.str("recovery", recovery->outcome);
  if (const RecallReport* recall = ctx.objects.find<RecallReport>(); recall && recall->rounds) {
    std::string ids;
    for (const auto& id : recall->recalled) ids.append(ids.empty() ? "" : ",").append(id);
    l.str("recalled", ids).num("recall_rounds", recall->rounds);
  }
  if (const BilledUsage* billed = ctx.objects.find<BilledUsage>()) {
    const providers::Usage& u = billed->usage;
    if (u.present) {
      l.num("usage_prompt", u.prompt).num("usage_completion", u.completion);
      if (u.cached_read) l.num("usage_cached_read", u.cached_read);
      if (u.cache_write) l.num("usage_cache_write", u.cache_write);
      if (u.reasoning) l.num("usage_reasoning", u.reasoning);
    }
    if (!billed->response_model.empty() && billed->response_model != ctx.model)
      l.str("response_model", billed->response_model);
    if (!billed->upstream_error_code.empty()) l.str("upstream_error", billed->upstream_error_code);
    if (billed->context_length_exceeded) l.flag("context_length_exceeded", true);
  }
  return l;
}

void log_info(std::string_view event, std::string_view message) {
  LogLine(event).str("level", "info").str("msg", message).emit();
}

void log_error(std::string_view event, std::string_view message) {
  LogLine(event).str("level", "error").str("msg", message).emit();
}

}  // namespace td::proxy
