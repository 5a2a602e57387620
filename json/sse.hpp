// Splits a text/event-stream byte stream into events, fed in arbitrary pieces.
//
// Network reads cut a stream anywhere: inside a field name, inside a JSON
// string, between the "\r" and "\n" of a line ending. The splitter keeps the
// bytes of the one event in progress and hands over each event whole, with its
// raw bytes (for byte-exact relaying) and its parsed fields (for usage parsing).
// Line endings per the SSE spec: "\r\n", "\n" or "\r".
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace td::json {

struct SseEvent {
  std::string_view raw;   // every byte of the event, through its blank line
  std::string_view name;  // the "event:" field, "" if none
  std::string_view data;  // the "data:" lines, joined with "\n"
  bool has_data = false;  // at least one "data" field
  // The "\n" of a "\r\n" whose "\r" ended the previous event (that event was
  // handed over at the "\r" so it is not held back waiting for one byte).
  // raw is "\n"; it belongs to the previous event.
  bool continuation = false;
  // The event outgrew the size cap: raw is a piece of it, handed over as it
  // came, with no fields parsed. Further pieces follow until its blank line.
  bool overflow = false;
  // The stream ended without the event's blank line (handed over by finish()).
  bool incomplete = false;
};

class SseSplitter {
 public:
  using Sink = std::function<void(const SseEvent&)>;

  explicit SseSplitter(std::size_t max_event = 8u << 20) : max_event_(max_event) {}

  void feed(std::string_view bytes, const Sink& sink);
  // End of stream: hands over a last event that had no blank line.
  void finish(const Sink& sink);
  // Bytes of the event in progress (what a relay holds back right now).
  std::size_t pending() const { return buf_.size(); }

 private:
  void end_line(std::size_t content_end, const Sink& sink);
  void dispatch(const Sink& sink, bool incomplete);
  void reset_event();

  std::size_t max_event_;
  std::string buf_;              // raw bytes of the event in progress
  std::size_t line_start_ = 0;   // where the current line starts in buf_
  std::size_t line_len_ = 0;     // content bytes of the current line (overflow mode)
  bool cr_pending_ = false;      // the last byte seen was a "\r" ending a line
  bool cr_ended_event_ = false;  // ... and that line was the event's blank line
  bool overflow_ = false;

  std::size_t name_pos_ = 0, name_len_ = 0;
  std::size_t data_pos_ = 0, data_len_ = 0;
  int data_lines_ = 0;
  std::string data_joined_;  // only when an event has several data lines
};

}  // namespace td::json
