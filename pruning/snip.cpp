#include "pruning/snip.hpp"

#include <algorithm>
#include <array>
#include <cctype>

#include "pruning/text.hpp"
#include "pruning/tokenizer/hash.hpp"
#include "pruning/word_search.hpp"

namespace td::pruning {

namespace {

// Keywords, matched case-sensitively as they appear in compiler, test-runner
// and shell output (lower-case "error" catches "error:" and "errors").
// One search for all of them: a text's error lines are found in one pass.
const WordSearch& error_words() {
  static const WordSearch words{"error",  "Error", "ERROR", "Traceback", "Exception", "FAILED", "FAIL:",
                                "failed", "fatal", "Fatal", "panic",     "assert",    "Assert", "No such file"};
  return words;
}

// What a gap hid: `whole` whole lines, and `parts` pieces of lines cut
// inside (0, 1 or 2: the line the head ends in, the one the tail starts in).
// A piece of a line is never called a line.
// `ref` (recall_ref(), may be empty) names the lines for tokendiet_recall.
// Whole lines named by their range need no count: "[… t1a2b3c4d:41-160
// hidden]" (the count and the handle would cost 3 tokens more a gap on every
// later request); a gap that cuts inside a line says what it took.
std::string hidden_notice(std::size_t whole, std::size_t parts, std::size_t bytes, std::string_view ref) {
  if (!ref.empty() && whole > 0 && parts == 0) {
    std::string out = "[…";
    out += ref;
    out += " hidden]\n";
    return out;
  }
  std::string what = whole == 0 ? std::to_string(bytes) + " bytes" : text::count_noun(whole, "line", "lines");
  if (whole > 0 && parts > 0) what += " and parts of " + std::to_string(parts);
  std::string out = "[… " + what + " hidden";
  out += ref;
  out += "]\n";
  return out;
}

bool is_space(char c) { return c == ' ' || c == '\t'; }

// A cut inside a line at or before `at`: at a space if the line has one
// there (so a word is never cut; the space goes with the hidden part), else
// on a character boundary.
std::size_t head_cut_inside(std::string_view text, std::size_t at) {
  const std::size_t limit = text::floor_boundary(text, at);
  for (std::size_t i = limit; i > 0; --i)
    if (is_space(text[i])) return i;
  return limit;
}

// The start of a tail cut inside a line at or after `at`: just after a space
// (the first one from `at` on), else on a character boundary. Never past `end`.
std::size_t tail_cut_inside(std::string_view text, std::size_t at, std::size_t end) {
  const std::size_t limit = text::ceil_boundary(text, at);
  for (std::size_t i = limit; i < end; ++i)
    if (is_space(text[i])) return i + 1;
  return limit;
}

}  // namespace

std::string recall_handle(std::string_view text) {
  const tok::Hash128 h = tok::hash128(text.data(), text.size());
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "t";
  for (int shift = 60; shift >= 32; shift -= 4) out += kHex[(h.hi >> shift) & 0xF];
  return out;
}

std::string recall_ref(std::string_view handle, std::size_t first, std::size_t last) {
  std::string out;
  out.reserve(handle.size() + 24);
  out += ' ';
  out += handle;
  if (first == 0) return out;
  out += ':';
  out += std::to_string(first);
  if (last > first) (out += '-') += std::to_string(last);
  return out;
}

std::uint64_t copy_line_key(std::string_view line, std::uint64_t min_bytes) {
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!line.empty() && blank(line.front())) line.remove_prefix(1);
  while (!line.empty() && blank(line.back())) line.remove_suffix(1);
  if (min_bytes == 0 || line.size() < min_bytes) return 0;
  return tok::hash_bytes(line.data(), line.size()) | 1;  // never 0
}

bool is_error_line(std::string_view line) { return error_words().find(line) != std::string_view::npos; }

std::size_t next_error_word(std::string_view text, std::size_t from) { return error_words().find(text, from); }

namespace detail {

std::size_t escape_length(std::string_view s) {
  constexpr std::string_view kSingle = "nrtbf\"\\/";
  if (s.size() < 2) return 1;
  if (kSingle.find(s[1]) != std::string_view::npos) return 2;
  if (s[1] == 'u' && s.size() >= 6 &&
      std::all_of(s.begin() + 2, s.begin() + 6, [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); }))
    return 6;
  return 1;
}

}  // namespace detail

std::vector<std::string_view> names_in(std::string_view text) {
  std::vector<std::string_view> out;
  NameSet seen;
  each_name(text, [&](std::string_view name) {
    if (seen.insert(name)) out.push_back(name);
  });
  return out;
}

bool is_path_name(std::string_view name) {
  if (name.find('/') != std::string_view::npos) return true;
  const std::size_t dot = name.rfind('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == name.size()) return false;
  const std::string_view ext = name.substr(dot + 1);
  return ext.size() <= 5 &&
         std::all_of(ext.begin(), ext.end(), [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }) &&
         std::any_of(name.begin(), name.begin() + dot,
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); });
}

std::vector<std::pair<std::size_t, std::size_t>> markers_in(std::string_view text,
                                                            const std::vector<std::string>& markers) {
  constexpr std::size_t kWordBytes = 32;  // a count, not a line
  std::vector<std::pair<std::size_t, std::size_t>> found;
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  for (const std::string& m : markers) {
    if (m.empty()) continue;
    for (std::size_t at = text::find(text, m); at != std::string_view::npos; at = text::find(text, m, at + m.size())) {
      std::size_t b = at, e = at + m.size();
      if (m.front() == ' ') {
        const std::size_t stop = b > kWordBytes ? b - kWordBytes : 0;
        while (b > stop && !blank(text[b - 1])) --b;
        b = text::ceil_boundary(text, b);
      }
      if (m.back() == ' ') {
        const std::size_t stop = std::min(text.size(), e + kWordBytes);
        while (e < stop && !blank(text[e])) ++e;
        e = text::floor_boundary(text, e);
      }
      found.emplace_back(b, e);
    }
  }
  std::sort(found.begin(), found.end());
  std::vector<std::pair<std::size_t, std::size_t>> merged;
  for (const auto& r : found)
    if (!merged.empty() && r.first <= merged.back().second)
      merged.back().second = std::max(merged.back().second, r.second);
    else
      merged.push_back(r);
  return merged;
}

bool is_boilerplate_line(std::string_view line) {
  std::string_view t = text::chomp(line);
  while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.remove_suffix(1);
  auto starts = [&](std::string_view p) { return t.substr(0, p.size()) == p; };
  if (t.empty()) return true;
  // A shell prompt ("bash-$", "root@host:/repo#", ">>>").
  if (t.size() <= 60 && (t.back() == '$' || t.back() == '#' || t == ">>>")) return true;
  // What agents wrap outputs in: SWE-agent's state lines, mini-swe-agent's tags.
  if (starts("(Open file:") || starts("(Current directory:") || starts("<returncode>") || starts("<output>") ||
      starts("</output>") || starts("<warning>") || starts("</warning>"))
    return true;
  // curl's progress meter: its header, and rows of numbers, times and units.
  if (t.find("% Total") != std::string_view::npos || t.find("Dload") != std::string_view::npos) return true;
  std::size_t digits = 0;
  bool meter = true, alnum = false;
  for (char c : t) {
    const bool digit = c >= '0' && c <= '9';
    digits += digit;
    alnum = alnum || digit || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    meter = meter &&
            (digit || c == ' ' || c == ':' || c == '-' || c == '.' || c == '%' || c == 'k' || c == 'M' || c == 'G');
  }
  if (meter && digits >= 5) return true;
  return !alnum && t.size() >= 3;  // a rule of dashes or equals signs
}

namespace {

// Which bytes of a snipped text stay: ranges [begin, end), ascending.
struct Keep {
  std::size_t begin, end;
};

// Head (or tail, walking back) of `ls`: whole informative lines within
// `budget`; boilerplate lines are passed over, to be hidden. If the first
// informative line is over the budget, `budget` bytes of it (at its start,
// or its end for the tail). Returns how many lines the zone spans.
template <class Add>
std::size_t pick_zone(const std::vector<std::string_view>& ls, std::size_t from, std::size_t limit, bool backward,
                      std::uint64_t budget, Add add) {
  std::size_t used = 0, taken = 0, span = 0;
  for (; span < limit; ++span) {
    const std::size_t i = backward ? from - span : from + span;
    if (is_boilerplate_line(ls[i])) continue;
    if (used + ls[i].size() > budget) {
      if (taken == 0) {
        add(i, budget);  // a part of the line
        ++span;
      }
      break;
    }
    used += ls[i].size();
    ++taken;
    add(i, ls[i].size());
  }
  return span;
}

}  // namespace

Snipped snip(std::string_view text, const SnipOptions& o) {
  Snipped s;
  const std::vector<std::string_view> ls = text::lines(text);
  const std::size_t n = ls.size();
  auto offset_of = [&](std::string_view l) { return static_cast<std::size_t>(l.data() - text.data()); };
  auto offset = [&](std::size_t i) { return offset_of(ls[i]); };
  std::vector<Keep> keep;

  // Head: informative lines from the start; tail: from the end, not
  // overlapping it. A line over the budget is cut at a space (never inside a
  // word where the line has a space in reach).
  const std::size_t head_span = pick_zone(ls, 0, n, false, o.head_bytes, [&](std::size_t i, std::size_t bytes) {
    const std::size_t b = offset(i);
    keep.push_back({b, b + (bytes < ls[i].size() ? head_cut_inside(ls[i], bytes) : ls[i].size())});
  });
  std::vector<Keep> tail;
  const std::size_t tail_span =
      n > head_span
          ? pick_zone(
                ls, n - 1, n - head_span, true, o.tail_bytes,
                [&](std::size_t i, std::size_t bytes) {
                  const std::size_t b = offset(i), e = b + ls[i].size();
                  tail.push_back(
                      {bytes < ls[i].size() ? b + tail_cut_inside(ls[i], ls[i].size() - bytes, ls[i].size()) : b, e});
                })
          : 0;
  // A head that ends inside the last line (one long line, a paragraph of
  // prose) leaves the tail zone nothing: the tail is then the end of that
  // same line, cut at a space, after what the head kept of it.
  if (n > 0 && head_span == n && !keep.empty()) {
    const std::size_t line_begin = offset(n - 1), line_end = line_begin + ls[n - 1].size();
    const std::size_t head_end = keep.back().end;
    if (head_end > line_begin && head_end < line_end && ls[n - 1].size() > o.tail_bytes) {
      const std::size_t from =
          line_begin + tail_cut_inside(ls[n - 1], ls[n - 1].size() - o.tail_bytes, ls[n - 1].size());
      if (from > head_end) tail.push_back({from, line_end});
    }
  }
  // The middle: the lines the caller keeps, and error lines, in order.
  std::size_t errors = 0;
  const bool keeps = o.keep_lines && !o.keep_lines->empty();
  const bool ranges = o.keep_ranges && !o.keep_ranges->empty();
  // The first error word at or after the line being looked at: one search
  // over the middle, not one per line (a word never spans a '\n').
  std::size_t error_at = 0;
  bool searched = false;
  auto error_line = [&](std::size_t i) {
    const std::size_t b = offset(i);
    if (!searched || error_at < b) error_at = next_error_word(text, b), searched = true;
    return error_at < b + ls[i].size();
  };
  // Whether line i (0-based) lies in a kept range (the ranges ascending, the lines walked in order).
  std::size_t range = 0;
  auto in_range = [&](std::size_t i) {
    if (!ranges) return false;
    const auto& rs = *o.keep_ranges;
    while (range < rs.size() && rs[range].second < i + 1) ++range;
    return range < rs.size() && rs[range].first <= i + 1;
  };
  for (std::size_t i = head_span; i + tail_span < n && (keeps || ranges || errors < o.max_error_lines); ++i) {
    if (in_range(i)) {
      keep.push_back({offset(i), offset(i) + ls[i].size()});
    } else if (keeps && std::binary_search(o.keep_lines->begin(), o.keep_lines->end(),
                                           copy_line_key(ls[i], o.keep_line_min_bytes))) {
      keep.push_back({offset(i), offset(i) + ls[i].size()});
    } else if (errors < o.max_error_lines && ls[i].size() <= 512 && ls[i].back() == '\n' && error_line(i)) {
      keep.push_back({offset(i), offset(i) + ls[i].size()});
      ++errors;
    }
  }
  keep.insert(keep.end(), tail.rbegin(), tail.rend());
  // The agent's own truncation notices, wherever they stand: merged into
  // what is kept, which stays ascending and disjoint.
  if (o.keep_markers && !o.keep_markers->empty()) {
    const auto marks = markers_in(text, *o.keep_markers);
    if (!marks.empty()) {
      for (const auto& [b, e] : marks) keep.push_back({b, e});
      std::sort(keep.begin(), keep.end(), [](const Keep& a, const Keep& b) { return a.begin < b.begin; });
      std::vector<Keep> merged;
      for (const Keep& k : keep)
        if (!merged.empty() && k.begin <= merged.back().end)
          merged.back().end = std::max(merged.back().end, k.end);
        else
          merged.push_back(k);
      keep = std::move(merged);
    }
  }

  // Every run of bytes not kept becomes a notice, unless the notice is longer.
  std::string kept, hidden;  // hidden: what is dropped, for its names
  std::size_t last_notice_end = 0, at = 0;
  bool cut = false;
  const std::string handle = o.recall ? recall_handle(text) : std::string();
  // The 1-based line a byte lies in, by the line starts (lines are in order).
  auto line_of = [&](std::size_t byte) {
    const auto it = std::upper_bound(ls.begin(), ls.end(), byte,
                                     [&](std::size_t b, std::string_view l) { return b < offset_of(l); });
    return static_cast<std::size_t>(it - ls.begin());
  };
  auto hide = [&](std::size_t b, std::size_t e) {
    if (b >= e) return;
    const std::string_view gap = text.substr(b, e - b);
    // A gap that starts or ends inside a line hides a piece of it, which is
    // never counted as a line.
    const std::vector<std::string_view> gl = text::lines(gap);
    const bool starts_inside = b > 0 && text[b - 1] != '\n';
    const bool ends_inside = e < text.size() && text[e - 1] != '\n';
    const std::size_t parts =
        std::size_t(starts_inside) + std::size_t(ends_inside && !(starts_inside && gl.size() == 1));
    std::size_t lines = 0;
    for (std::string_view l : gl) lines += !l.empty();
    lines = lines > parts ? lines - parts : 0;
    const std::string ref = o.recall ? recall_ref(handle, line_of(b), line_of(e - 1)) : std::string();
    std::string notice = hidden_notice(lines, parts, gap.size(), ref);
    if (notice.size() >= gap.size()) {
      kept += gap;
      return;
    }
    if (!kept.empty() && kept.back() != '\n') kept += '\n';
    kept += notice;
    last_notice_end = kept.size();
    if (o.max_names > 0) hidden += gap;
    cut = true;
  };
  for (const Keep& k : keep) {
    hide(at, k.begin);
    kept += text.substr(k.begin, k.end - k.begin);
    at = k.end;
  }
  hide(at, text.size());
  if (!cut) return s;

  // One names slot, after the last notice.
  Snipped::Piece first{kept.substr(0, last_notice_end), o.max_names > 0, {}};
  std::string rest = kept.substr(last_notice_end);
  if (first.slot)
    for (std::string_view name : names_in(hidden))
      if (kept.find(name) == std::string::npos) first.names.emplace_back(name);
  s.pieces.push_back(std::move(first));
  s.pieces.push_back(Snipped::Piece{std::move(rest), false, {}});
  s.cut = true;
  return s;
}

std::uint64_t NameSet::hash_of(std::string_view name) { return tok::hash_bytes(name.data(), name.size()) | 1; }

// The slot holding `name`, or the empty slot where it would go.
std::size_t NameSet::find(std::string_view name, std::uint64_t h) const {
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = h & mask;; i = (i + 1) & mask) {
    const Slot& slot = slots_[i];
    if (slot.hash == 0 || (slot.hash == h && slot.name == name)) return i;
  }
}

bool NameSet::contains(std::string_view name) const {
  if (size_ == 0) return false;
  return slots_[find(name, hash_of(name))].hash != 0;
}

bool NameSet::insert(std::string_view name) {
  if (2 * (size_ + 1) > slots_.size()) grow();
  const std::uint64_t h = hash_of(name);
  Slot& slot = slots_[find(name, h)];
  if (slot.hash != 0) return false;
  slot = Slot{name, h};
  ++size_;
  return true;
}

void NameSet::grow() {
  // A request's set takes a few hundred names: start at 512 slots (12 KB)
  // rather than rehash its way up from a handful.
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(old.empty() ? 512 : 2 * old.size(), Slot{});
  for (const Slot& slot : old)
    if (slot.hash != 0) slots_[find(slot.name, slot.hash)] = slot;
}

std::string render(const Snipped& s, std::uint32_t max_names, const NameSet* listed,
                   std::vector<std::string_view>* used, bool json_escaped) {
  constexpr std::string_view kOpen = "[hidden names: ";
  std::size_t size = max_names ? kOpen.size() + 256 : 0;  // room for a names line
  for (const auto& piece : s.pieces) size += piece.text.size();
  std::string out;
  out.reserve(size);
  for (const auto& piece : s.pieces) {
    out += piece.text;
    if (!piece.slot || max_names == 0) continue;
    // The names line is written in place, and taken back if it lists none.
    const std::size_t line_start = out.size();
    out += kOpen;
    std::uint32_t count = 0;
    for (const auto& name : piece.names) {
      if (count == max_names) break;
      if (listed && listed->contains(name)) continue;
      if (count++) out += ' ';
      out += name;
      if (used) used->push_back(name);
    }
    if (count == 0) {
      out.resize(line_start);
      continue;
    }
    out += ']';
    out += json_escaped ? "\\n" : "\n";
  }
  return out;
}

std::string snip_text(std::string_view text, const SnipOptions& o) {
  Snipped s = snip(text, o);
  if (!s.cut) return std::string{text};
  std::string out = render(s, o.max_names, nullptr);
  if (out.size() >= text.size()) return std::string{text};
  return out;
}

}  // namespace td::pruning
