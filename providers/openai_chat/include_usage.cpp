#include "providers/openai_chat/include_usage.hpp"

#include <cstring>

#include "json/json_scan.hpp"

namespace td::providers {
namespace {

const json::JsonMemberView* last_member(const std::vector<json::JsonMemberView>& ms, std::string_view key) {
  const json::JsonMemberView* found = nullptr;
  for (const auto& m : ms)
    if (m.key == key) found = &m;
  return found;
}

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// `value` with its blanks trimmed is an empty array: "[]", "[ ]".
bool is_empty_array(std::string_view v) {
  if (v.size() < 2 || v.front() != '[' || v.back() != ']') return false;
  for (std::size_t i = 1; i + 1 < v.size(); ++i)
    if (!is_blank(v[i])) return false;
  return true;
}

std::string splice(std::string_view s, std::size_t pos, std::size_t len, std::string_view with) {
  std::string out;
  out.reserve(s.size() - len + with.size());
  out.append(s.substr(0, pos));
  out.append(with);
  out.append(s.substr(pos + len));
  return out;
}

// The byte range to cut to remove member `i` of `ms` from its object, keeping
// the object valid: a later member takes its separator with it; the first one
// takes the separator after it.
std::pair<std::size_t, std::size_t> member_cut(const std::vector<json::JsonMemberView>& ms, std::size_t i) {
  const auto& m = ms[i];
  if (i > 0) return {m.sep_pos, m.value_end - m.sep_pos};
  if (ms.size() > 1) return {m.key_pos, ms[1].key_pos - m.key_pos};
  return {m.key_pos, m.value_end - m.key_pos};
}

}  // namespace

IncludeUsageSplice inject_include_usage(std::string_view body) {
  IncludeUsageSplice r;
  auto ms = json::top_level_members(body);
  if (ms.empty()) return r;  // not an object (or "{}": not a chat request either)
  const json::JsonMemberView* stream = last_member(ms, "stream");
  if (!stream || stream->value != "true") {
    r.outcome = IncludeUsage::not_streaming;
    return r;
  }
  const json::JsonMemberView* opts = last_member(ms, "stream_options");
  if (!opts) {
    // Appended as the last member, right after the last value, so every
    // existing byte keeps its place.
    r.body = splice(body, ms.back().value_end, 0, R"(,"stream_options":{"include_usage":true})");
    r.outcome = IncludeUsage::injected;
    return r;
  }
  if (json::is_json_null(opts->value)) {
    r.body = splice(body, opts->value_pos, opts->value.size(), R"({"include_usage":true})");
    r.outcome = IncludeUsage::injected;
    return r;
  }
  if (opts->value.empty() || opts->value.front() != '{') return r;  // unsupported
  auto os = json::top_level_members(opts->value);
  if (os.empty()) {
    // "{}" or "{ }": not listed as members; anything else is malformed.
    std::string_view inner = opts->value.substr(1, opts->value.size() - 2);
    for (char c : inner)
      if (!is_blank(c)) return r;
    r.body = splice(body, opts->value_pos + 1, 0, R"("include_usage":true)");
    r.outcome = IncludeUsage::injected;
    return r;
  }
  if (const json::JsonMemberView* inc = last_member(os, "include_usage")) {
    if (inc->value == "true") {
      r.outcome = IncludeUsage::client_asked;
      return r;
    }
    if (inc->value == "false" || json::is_json_null(inc->value)) {
      r.body = splice(body, opts->value_pos + inc->value_pos, inc->value.size(), "true");
      r.outcome = IncludeUsage::injected;
    }
    return r;  // some other value: leave it to upstream to judge
  }
  r.body = splice(body, opts->value_pos + os.back().value_end, 0, R"(,"include_usage":true)");
  r.outcome = IncludeUsage::injected;
  return r;
}

void OpenAiUsageScrubber::on_event(const json::SseEvent& ev, std::string& out) {
  if (ev.continuation) {  // the "\n" of a "\r\n" that ended the previous event
    if (!last_dropped_) out.append(ev.raw);
    return;
  }
  last_dropped_ = false;
  std::string_view d = ev.data;
  // The reader only needs the events that can tell it something new: the
  // first one (model) and the usage chunk; the rest are just scrubbed.
  bool has_usage = ev.has_data && ::memmem(d.data(), d.size(), "\"usage\"", 7) != nullptr;
  if (reader_.model().empty() || !has_usage) {
    reader_.on_event(ev);
  } else if (::memmem(d.data(), d.size(), "\"usage\":null", 12) == nullptr) {
    reader_.on_event(ev);  // a usage value that is not the plain null
  }
  // Only a single-line data field can be edited in place (OpenAI never sends
  // more); anything else is relayed as it came.
  bool in_place =
      ev.has_data && !ev.overflow && d.data() >= ev.raw.data() && d.data() + d.size() <= ev.raw.data() + ev.raw.size();
  if (!in_place || !has_usage) {
    out.append(ev.raw);
    return;
  }
  auto ms = json::top_level_members(d);
  std::size_t usage_i = ms.size();
  for (std::size_t i = 0; i < ms.size(); ++i)
    if (ms[i].key == "usage") usage_i = i;
  if (usage_i == ms.size()) {
    out.append(ev.raw);
    return;
  }
  const auto& usage = ms[usage_i];
  if (!json::is_json_null(usage.value)) {
    // The usage-only chunk exists only because we asked: choices [] (or, from
    // some compatible servers, null or absent). A chunk that also carries
    // choices would have been sent anyway and is relayed as it is.
    const json::JsonMemberView* choices = last_member(ms, "choices");
    if (!choices || json::is_json_null(choices->value) || is_empty_array(choices->value)) {
      last_dropped_ = true;
      removed_usage_chunk_ = true;
      return;
    }
    out.append(ev.raw);
    return;
  }
  auto [pos, len] = member_cut(ms, usage_i);
  std::size_t base = static_cast<std::size_t>(d.data() - ev.raw.data());
  out.append(ev.raw.substr(0, base + pos));
  out.append(ev.raw.substr(base + pos + len));
  ++removed_nulls_;
}

void OpenAiUsageScrubber::feed(std::string_view in, std::string& out) {
  if (mode_ == Mode::undecided) {
    std::size_t i = 0;
    while (i < in.size() && is_blank(in[i])) ++i;
    if (i < in.size()) mode_ = (in[i] == '{' || in[i] == '[') ? Mode::passthrough : Mode::sse;
  }
  if (mode_ == Mode::passthrough) {
    out.append(in);
    json_.feed(in);
    return;
  }
  // Undecided (only blanks so far) is split as SSE too: blank lines are empty
  // events and go straight through.
  splitter_.feed(in, [&](const json::SseEvent& ev) { on_event(ev, out); });
}

void OpenAiUsageScrubber::finish(std::string& out) {
  if (mode_ == Mode::passthrough) {
    json_.finish();
    return;
  }
  splitter_.finish([&](const json::SseEvent& ev) { on_event(ev, out); });
}

}  // namespace td::providers
