// JSON log lines on stderr, one per event:
//   {"ts":"2025-01-01T12:00:00.123Z","event":"request",...}
// The access line of every request is event "request" (access_line()).
// API keys never appear: only their fingerprint, and secret query parameters
// (?key=...) are redacted from the path.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/phases/request_context.hpp"

namespace td::proxy {

class LogLine {
 public:
  explicit LogLine(std::string_view event);
  LogLine& str(std::string_view key, std::string_view value);
  LogLine& num(std::string_view key, std::uint64_t value);
  LogLine& ms(std::string_view key, double milliseconds);  // 3 decimals
  LogLine& flag(std::string_view key, bool value);
  LogLine& strs(std::string_view key, const std::vector<std::string>& values);  // a JSON array of strings
  const std::string& text();                                                    // the finished line, without newline
  void emit();  // writes the line + '\n' to stderr in one write()
  // Appends the line to this thread's batch (the access lines of an I/O
  // thread: one write() per batch instead of one per request). The batch is
  // written when it passes 16 KiB and by flush_thread_log(). Returns true
  // when the batch was empty: the caller then schedules a flush behind the
  // work already queued (at low load at once, under load after many lines).
  bool emit_batched();

 private:
  std::string out_;
  bool closed_ = false;
};

// Writes this thread's batch of lines (see LogLine::emit_batched()).
void flush_thread_log();

// The access line for a finished request.
LogLine access_line(const RequestContext& ctx);

// Shorthands for operational events.
void log_info(std::string_view event, std::string_view message);
void log_error(std::string_view event, std::string_view message);

}  // namespace td::proxy
