#include "json/sse.hpp"

namespace td::json {

void SseSplitter::reset_event() {
  buf_.clear();
  line_start_ = 0;
  line_len_ = 0;
  name_pos_ = name_len_ = 0;
  data_pos_ = data_len_ = 0;
  data_lines_ = 0;
  data_joined_.clear();
}

void SseSplitter::dispatch(const Sink& sink, bool incomplete) {
  SseEvent ev;
  ev.raw = buf_;
  ev.incomplete = incomplete;
  if (overflow_) {
    ev.overflow = true;
  } else {
    ev.name = std::string_view(buf_).substr(name_pos_, name_len_);
    ev.has_data = data_lines_ > 0;
    ev.data = data_lines_ > 1 ? std::string_view(data_joined_) : std::string_view(buf_).substr(data_pos_, data_len_);
  }
  sink(ev);
  reset_event();
}

// A line ended; its content is buf_[line_start_, content_end).
void SseSplitter::end_line(std::size_t content_end, const Sink& sink) {
  std::size_t len = overflow_ ? line_len_ : content_end - line_start_;
  line_len_ = 0;
  if (len == 0) {  // blank line: the event is complete
    dispatch(sink, false);
    overflow_ = false;
    return;
  }
  if (overflow_) return;
  std::string_view line = std::string_view(buf_).substr(line_start_, len);
  std::size_t colon = line.find(':');
  std::string_view field = line.substr(0, colon);
  std::size_t vpos = colon == std::string_view::npos ? len : colon + 1;
  if (vpos < len && line[vpos] == ' ') ++vpos;  // one optional space
  std::size_t abs = line_start_ + vpos;
  std::size_t vlen = len - vpos;
  if (field == "data") {
    if (data_lines_ == 0) {
      data_pos_ = abs;
      data_len_ = vlen;
    } else {
      if (data_lines_ == 1) data_joined_.assign(buf_, data_pos_, data_len_);
      data_joined_.push_back('\n');
      data_joined_.append(buf_, abs, vlen);
    }
    ++data_lines_;
  } else if (field == "event") {
    name_pos_ = abs;
    name_len_ = vlen;
  }
  // "id", "retry" and ":" comments carry nothing we need.
}

void SseSplitter::feed(std::string_view bytes, const Sink& sink) {
  const char* p = bytes.data();
  const char* end = p + bytes.size();
  if (p == end) return;

  if (cr_pending_) {
    cr_pending_ = false;
    bool ended_event = cr_ended_event_;
    cr_ended_event_ = false;
    if (*p == '\n') {
      ++p;
      if (ended_event) {
        SseEvent ev;
        ev.raw = "\n";
        ev.continuation = true;
        sink(ev);
      } else if (overflow_) {
        SseEvent ev;
        ev.raw = "\n";
        ev.overflow = true;
        sink(ev);
      } else {
        buf_.push_back('\n');
        line_start_ = buf_.size();
      }
    }
  }

  while (p < end) {
    const char* q = p;
    while (q < end && *q != '\r' && *q != '\n') ++q;
    std::size_t content_end;
    if (overflow_) {
      line_len_ += static_cast<std::size_t>(q - p);
      buf_.append(p, q);
      content_end = buf_.size();
    } else {
      buf_.append(p, q);
      content_end = buf_.size();
      line_len_ = content_end - line_start_;
    }
    if (q == end) {
      // No line end in this piece. An oversized event goes out as it is.
      if (!overflow_ && buf_.size() > max_event_) overflow_ = true;
      if (overflow_ && !buf_.empty()) {
        SseEvent ev;
        ev.raw = buf_;
        ev.overflow = true;
        sink(ev);
        buf_.clear();
        line_start_ = 0;
      }
      break;
    }
    // A line ending: "\n", "\r\n", or a "\r" whose "\n" may be in the next piece.
    buf_.push_back(*q);
    if (*q == '\r') {
      if (q + 1 < end) {
        if (q[1] == '\n') buf_.push_back('\n'), ++q;
      } else {
        cr_pending_ = true;
      }
    }
    p = q + 1;
    bool blank = (overflow_ ? line_len_ : content_end - line_start_) == 0;
    end_line(content_end, sink);
    if (blank) {
      cr_ended_event_ = cr_pending_;
    } else {
      line_start_ = buf_.size();
      if (!overflow_ && buf_.size() > max_event_) {
        // Too big to hold: hand over what we have and relay the rest as it comes.
        overflow_ = true;
        SseEvent ev;
        ev.raw = buf_;
        ev.overflow = true;
        sink(ev);
        buf_.clear();
        line_start_ = 0;
      }
    }
  }
}

void SseSplitter::finish(const Sink& sink) {
  cr_pending_ = cr_ended_event_ = false;
  if (buf_.empty()) return;
  if (!overflow_ && buf_.size() > line_start_) {
    // An unterminated last line still counts as a field of the last event
    // (end_line only dispatches on a blank line, and this one is not).
    end_line(buf_.size(), sink);
    line_start_ = buf_.size();
  }
  dispatch(sink, true);
  overflow_ = false;
}

}  // namespace td::json
