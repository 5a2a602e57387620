#include "pruning/snip.hpp"

#include <algorithm>
#include <array>
#include <cctype>

#include "pruning/text.hpp"
#include "pruning/tokenizer/hash.hpp"

namespace td::pruning {

namespace {

// Keywords, matched case-sensitively as they appear in compiler, test-runner
// and shell output (lower-case "error" catches "error:" and "errors").
constexpr std::array<std::string_view, 14> kErrorWords = {
    "error",  "Error", "ERROR",   "Traceback", "Exception", "FAILED", "FAIL:",
    "failed", "fatal", "Fatal",   "panic",     "assert",    "Assert", "No such file"};

// What a gap hid: `whole` whole lines, and `parts` pieces of lines cut
// inside (0, 1 or 2: the line the head ends in, the one the tail starts in).
// A piece of a line is never called a line.
std::string hidden_notice(std::size_t whole, std::size_t parts, std::size_t bytes) {
  if (whole == 0) return "[... " + std::to_string(bytes) + " bytes hidden ...]\n";
  std::string what = text::count_noun(whole, "line", "lines");
  if (parts > 0) what += " and parts of " + std::to_string(parts);
  return "[... " + what + " (" + std::to_string(bytes) + " bytes) hidden ...]\n";
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

bool name_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
         c == '/' || c == ':' || c == '-';
}

// The length of the JSON escape sequence starting at s[0] == '\\' (\n, \",
// \\, \u00e9...), or 1 for a backslash that starts none.
std::size_t escape_length(std::string_view s) {
  constexpr std::string_view kSingle = "nrtbf\"\\/";
  if (s.size() < 2) return 1;
  if (kSingle.find(s[1]) != std::string_view::npos) return 2;
  if (s[1] == 'u' && s.size() >= 6 &&
      std::all_of(s.begin() + 2, s.begin() + 6, [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); }))
    return 6;
  return 1;
}

bool is_name(std::string_view run) {
  if (run.size() < 6) return false;
  return std::any_of(run.begin(), run.end(), [](char c) {
    return (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '/' || c == ':';
  });
}

}  // namespace

bool is_error_line(std::string_view line) {
  for (std::string_view w : kErrorWords)
    if (line.find(w) != std::string_view::npos) return true;
  return false;
}

std::vector<std::string_view> names_in(std::string_view text) {
  std::vector<std::string_view> out;
  NameSet seen;
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] == '\\' && i + 1 < text.size()) {
      // JSON escapes in output that prints JSON: the escape stands for
      // its decoded character (a newline, a quote...), never for its letter.
      i += escape_length(text.substr(i));
      continue;
    }
    if (!name_char(text[i])) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < text.size() && name_char(text[j])) ++j;
    std::string_view run = text.substr(i, j - i);
    if (is_name(run) && seen.insert(run)) out.push_back(run);
    i = j;
  }
  return out;
}

Snipped snip(std::string_view text, const SnipOptions& o) {
  Snipped s;
  std::vector<std::string_view> ls = text::lines(text);
  const std::size_t n = ls.size();

  // Head: whole lines within the budget; a first line over it is cut inside.
  std::size_t head_lines = 0, head_len = 0;
  while (head_lines < n && head_len + ls[head_lines].size() <= o.head_bytes) head_len += ls[head_lines++].size();
  std::size_t head_cut = head_len;  // bytes of text kept at the start
  if (head_lines == 0 && n > 0) head_cut = head_cut_inside(text, o.head_bytes);

  // Tail: whole lines within the budget, not overlapping the head.
  std::size_t tail_lines = 0, tail_len = 0;
  while (tail_lines + head_lines < n && tail_len + ls[n - 1 - tail_lines].size() <= o.tail_bytes)
    tail_len += ls[n - 1 - tail_lines++].size();
  std::size_t tail_cut = text.size() - tail_len;  // first byte of text kept at the end
  if (tail_lines == 0 && head_lines < n) {
    std::size_t want = text.size() > o.tail_bytes ? text.size() - o.tail_bytes : 0;
    // Within the last line: the tail never reaches back into an earlier one.
    const std::size_t last_line = text.size() - ls[n - 1].size();
    tail_cut = std::max(tail_cut_inside(text, std::max(want, last_line), text.size()), head_cut);
  }
  if (tail_cut <= head_cut) return s;

  // The middle, [head_cut, tail_cut): keep error lines, hide the rest.
  std::string kept{text.substr(0, head_cut)};
  if (!kept.empty() && kept.back() != '\n') kept += '\n';
  std::string_view middle = text.substr(head_cut, tail_cut - head_cut);
  std::string hidden;  // what is dropped, for its names
  // The middle's first line is a piece when the head ends inside it, its last
  // when the tail starts inside it.
  const bool head_inside = head_cut > 0 && text[head_cut - 1] != '\n';
  const bool tail_inside = tail_cut < text.size() && text[tail_cut - 1] != '\n';
  const std::vector<std::string_view> middle_lines = text::lines(middle);
  std::size_t gap_lines = 0, gap_parts = 0, gap_bytes = 0, errors = 0;
  for (std::size_t k = 0; k < middle_lines.size(); ++k) {
    const std::string_view line = middle_lines[k];
    const bool piece = (k == 0 && head_inside) || (k + 1 == middle_lines.size() && tail_inside);
    if (!piece && errors < o.max_error_lines && line.size() <= 512 && line.back() == '\n' && is_error_line(line)) {
      if (gap_lines + gap_parts > 0) kept += hidden_notice(gap_lines, gap_parts, gap_bytes);
      gap_lines = gap_parts = gap_bytes = 0;
      kept += line;
      ++errors;
    } else {
      ++(piece ? gap_parts : gap_lines);
      gap_bytes += line.size();
      if (o.max_names > 0) hidden += line;
    }
  }
  if (gap_lines + gap_parts > 0) kept += hidden_notice(gap_lines, gap_parts, gap_bytes);
  std::string_view tail = text.substr(tail_cut);
  Snipped::Piece first{std::move(kept), o.max_names > 0, {}};
  if (first.slot)
    for (std::string_view name : names_in(hidden))
      if (first.text.find(name) == std::string::npos && tail.find(name) == std::string_view::npos)
        first.names.emplace_back(name);
  s.pieces.push_back(std::move(first));
  s.pieces.push_back(Snipped::Piece{std::string{tail}, false, {}});
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
  constexpr std::string_view kOpen = "[names in the hidden lines: ";
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
