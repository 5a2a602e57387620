#include "proxy/log.hpp"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <ctime>

#include "proxy/json_text.hpp"
#include "proxy/routing.hpp"

namespace td::proxy {

LogLine::LogLine(std::string_view event) {
  out_.reserve(384);
  auto now = std::chrono::system_clock::now();
  auto secs = std::chrono::system_clock::to_time_t(now);
  auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char ts[64];
  std::snprintf(ts, sizeof ts, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(millis));
  out_ += R"({"ts":")";
  out_ += ts;
  out_ += R"(","event":)";
  append_json_string(out_, event);
}

LogLine& LogLine::str(std::string_view key, std::string_view value) {
  out_.push_back(',');
  append_json_string(out_, key);
  out_.push_back(':');
  append_json_string(out_, value);
  return *this;
}

LogLine& LogLine::num(std::string_view key, std::uint64_t value) {
  out_.push_back(',');
  append_json_string(out_, key);
  out_.push_back(':');
  out_ += std::to_string(value);
  return *this;
}

LogLine& LogLine::ms(std::string_view key, double value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", value);
  out_.push_back(',');
  append_json_string(out_, key);
  out_.push_back(':');
  out_ += buf;
  return *this;
}

LogLine& LogLine::flag(std::string_view key, bool value) {
  out_.push_back(',');
  append_json_string(out_, key);
  out_ += value ? ":true" : ":false";
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
  if (!ctx.profile.empty()) l.str("profile", ctx.profile);
  if (!ctx.mode.empty()) l.str("mode", ctx.mode);
  if (ctx.tokens_before || ctx.tokens_after)
    l.num("tokens_before", ctx.tokens_before).num("tokens_after", ctx.tokens_after);
  if (!ctx.strategies.empty()) l.str("strategies", ctx.strategies);
  if (ctx.usage.present) {
    l.num("usage_prompt", ctx.usage.prompt).num("usage_completion", ctx.usage.completion);
    if (ctx.usage.cached_read) l.num("usage_cached_read", ctx.usage.cached_read);
    if (ctx.usage.cache_write) l.num("usage_cache_write", ctx.usage.cache_write);
    if (ctx.usage.reasoning) l.num("usage_reasoning", ctx.usage.reasoning);
  }
  if (!ctx.response_model.empty() && ctx.response_model != ctx.model)
    l.str("response_model", ctx.response_model);
  if (!ctx.upstream_error_code.empty()) l.str("upstream_error", ctx.upstream_error_code);
  if (ctx.context_length_exceeded) l.flag("context_length_exceeded", true);
  return l;
}

void log_info(std::string_view event, std::string_view message) {
  LogLine(event).str("level", "info").str("msg", message).emit();
}

void log_error(std::string_view event, std::string_view message) {
  LogLine(event).str("level", "error").str("msg", message).emit();
}

}  // namespace td::proxy
