// Head + tail of a long text, line-aware, with what the hidden middle held
// that matters most kept: error lines, and the names it mentioned. Shared by
// the strategies that shorten stale text (stale tool outputs, stale
// assistant text).
//
// Snipping is split in two so that the expensive part is memoised by text
// and the cheap part can depend on the rest of the request: snip() turns a
// text into a Snipped (kept pieces, and between them a slot with the names
// the hidden lines mention); render() lists in each slot the names not
// already listed earlier in the request (NameSet), up to a cap.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace td::pruning {

struct SnipOptions {
  std::uint64_t head_bytes = 1024;
  std::uint64_t tail_bytes = 1024;
  std::uint32_t max_error_lines = 8;  // error lines of the middle kept, in order
  std::uint32_t max_names = 0;        // names of the middle listed (0: none)
  // Lines of the middle kept whatever their place, by copy_line_key
  // (sorted; the lines the caller knows the agent copies). Null: none.
  const std::vector<std::uint64_t>* keep_lines = nullptr;
  std::uint64_t keep_line_min_bytes = 0;  // the keys' min_bytes
  // Each notice names the text's recall handle and the lines it hid,
  // "[… t1a2b3c4d:41-160 hidden]" (recall_ref()), so the model can
  // read them back with tokendiet_recall (docs/design.md §Recall).
  bool recall = false;
  // Plain texts kept wherever they stand (markers_in()): an agent's own
  // truncation notice stays visible in the cut. Null: none.
  const std::vector<std::string>* keep_markers = nullptr;
  // Lines kept whatever their place: 1-based inclusive ranges, ascending
  // (RecalledLines::of(), pruning/recalled_lines.hpp: the lines the model
  // recalled of this text, docs/design.md §Recall). Null: none.
  const std::vector<std::pair<std::size_t, std::size_t>>* keep_ranges = nullptr;
};

// Kept text with name slots: render = pieces[0].text, slot 0, pieces[1].text, ...
struct Snipped {
  struct Piece {
    std::string text;
    bool slot = false;               // a names line may follow the text
    std::vector<std::string> names;  // the slot's candidates, in order of appearance
  };
  std::vector<Piece> pieces;
  bool cut = false;  // false: nothing hidden; the text stays as it is
  // Texts the notices name other than the one snipped (a tool call's long
  // string values, each snipped on its own): what the recall loop answers.
  std::vector<std::shared_ptr<const std::string>> named;
};

// Names already listed in this request, so a later slot does not repeat them
// (views into Snipped names, which must outlive the set). A flat
// open-addressing set: a request inserts a few hundred names and looks up
// more, and a node-based set allocated a node for every insert.
class NameSet {
 public:
  NameSet() = default;
  NameSet(std::initializer_list<std::string_view> names) {
    for (std::string_view n : names) insert(n);
  }
  bool contains(std::string_view name) const;
  bool insert(std::string_view name);  // false: it was there already
  template <class It>
  void insert(It first, It last) {
    for (; first != last; ++first) insert(*first);
  }
  std::size_t size() const { return size_; }

 private:
  struct Slot {
    std::string_view name;
    std::uint64_t hash = 0;  // 0: empty (a name's hash is forced odd)
  };
  static std::uint64_t hash_of(std::string_view name);
  std::size_t find(std::string_view name, std::uint64_t h) const;
  void grow();

  std::vector<Slot> slots_;  // a power of two, at most half full
  std::size_t size_ = 0;
};

// The cut (see snip_text); names are every name of the hidden lines that the
// kept text does not contain, uncapped.
Snipped snip(std::string_view text, const SnipOptions& options);

// The text of `s`: each slot lists up to `max_names` of its names that are
// not in `listed`, as one line
//   "[hidden names: src/app.py parse_args E1234]"
// ended by "\n", or by the two characters "\n" when `json_escaped` (the text
// is the inside of a JSON string). The names it lists are appended to `used`.
std::string render(const Snipped& s, std::uint32_t max_names, const NameSet* listed,
                   std::vector<std::string_view>* used = nullptr, bool json_escaped = false);

// snip() + render() with nothing listed before:
//   - whole informative lines from the start within head_bytes, whole
//     informative lines from the end within tail_bytes (boilerplate lines,
//     is_boilerplate_line(), are passed over and hidden, so the budget goes
//     to what the output says); a first informative line longer than the
//     budget is cut inside, after a space so that no word is cut (only a line
//     with no space in reach is cut between two characters, never inside a
//     UTF-8 character); a hidden run shorter than its notice stays as it is;
//   - every marker of keep_markers where it stands, with its word
//     (markers_in()), even inside a line the head, tail or a gap cuts;
//   - every middle line whose key is in keep_lines or whose number is in
//     keep_ranges, and
//     up to max_error_lines middle lines that look like errors, in order,
//     each gap replaced by "[… 120 lines hidden]"; a piece
//     of a line cut inside is never counted as a line:
//     "[… 180 bytes hidden]" (inside one line),
//     "[… 3 lines and parts of 2 hidden]";
//   - up to max_names names the hidden lines mention and the kept text does
//     not, in order of appearance, on one line after the last gap.
// Returns `text` unchanged when the result would not be shorter.
std::string snip_text(std::string_view text, const SnipOptions& options);

// A text's recall handle (docs/design.md §Recall, handles): "t" and the first
// 8 hex digits of its archive id (XXH3-128 of the decoded text, high word
// first). A function of the text alone, so a notice naming it renders the
// same on every request, every replica and after a restart.
std::string recall_handle(std::string_view text);

// What a notice appends to name what it hid: " t1a2b3c4d:41-160" (lines
// first..last of the text, 1-based and inclusive), " t1a2b3c4d:41" (one
// line), " t1a2b3c4d" (first == 0: the whole text). The model passes
// "t1a2b3c4d:41-160" to tokendiet_recall as it stands.
std::string recall_ref(std::string_view handle, std::size_t first = 0, std::size_t last = 0);

// Where `text` holds each of `markers`, as byte ranges [begin, end),
// ascending and disjoint: the marker with the word it qualifies (a marker
// starting with a space takes the word before it, one ending with a space the
// word after it, each up to 32 bytes and on character boundaries), so
// " tokens truncated…" keeps "…33930 tokens truncated…".
std::vector<std::pair<std::size_t, std::size_t>> markers_in(std::string_view text,
                                                            const std::vector<std::string>& markers);

// Whether a line says nothing an agent would use from a head or tail: blank,
// a shell prompt, an agent's wrapper lines (SWE-agent's "(Open file: ...)",
// mini-swe-agent's <returncode>/<output> tags), curl's progress meter, a
// rule of dashes.
bool is_boilerplate_line(std::string_view line);

// Whether a cut from `before` to `after` bytes is worth making: it saves at
// least `min_saving` bytes, and at least one.
inline bool saves_enough(std::uint64_t before, std::uint64_t after, std::uint64_t min_saving) {
  return after < before && before - after >= min_saving;
}

// A line's key for SnipOptions::keep_lines: the hash of the line stripped of
// the spaces, tabs, '\r' and '\n' around it; 0 when that is shorter than
// `min_bytes` (or min_bytes is 0).
std::uint64_t copy_line_key(std::string_view line, std::uint64_t min_bytes);

// Whether a line looks like an error worth keeping from a hidden middle
// (error, exception, traceback, failed, fatal, panic, assert, ...).
bool is_error_line(std::string_view line);

// Where the first of is_error_line()'s words at or after `from` starts in
// `text`, or npos: a text's error lines in one pass (no word spans a '\n').
std::size_t next_error_word(std::string_view text, std::size_t from);

// The names `text` mentions, in order of first appearance, without repeats:
// maximal runs of [A-Za-z0-9_./:-], less any '.' and ':' they end with, at
// least 6 characters long that contain a digit or one of _ . / : (paths,
// identifiers, numbers, error codes: what an agent refers back to exactly,
// and what prose around them does not carry; not "absent." or "Claude:").
// Read as decoded text: an escape sequence (\n, \", \\, \u00e9, as in output
// that prints JSON) separates names like the character it stands for, so
// "a\n2026-11-20T10:00:01Z" names "2026-11-20T10:00:01Z", not "n2026-...".
std::vector<std::string_view> names_in(std::string_view text);

namespace detail {
// Each byte's class for names_in(), looked up once a byte: a name's
// characters [A-Za-z0-9_./:-], those that mark a run as a name (a digit or
// one of _ . / :), and the backslash that starts a JSON escape.
inline constexpr std::uint8_t kNameChar = 1, kNameMark = 2, kEscape = 4;
inline constexpr std::array<std::uint8_t, 256> kNameClass = [] {
  std::array<std::uint8_t, 256> t{};
  for (int c = 'A'; c <= 'Z'; ++c) t[c] = kNameChar;
  for (int c = 'a'; c <= 'z'; ++c) t[c] = kNameChar;
  for (int c = '0'; c <= '9'; ++c) t[c] = kNameChar | kNameMark;
  for (unsigned char c : std::string_view("_./:")) t[c] = kNameChar | kNameMark;
  t['-'] = kNameChar;
  t['\\'] = kEscape;
  return t;
}();

// The length of the JSON escape sequence starting at s[0] == '\\' (\n, \",
// \\, \u00e9...), or 1 for a backslash that starts none.
std::size_t escape_length(std::string_view s);
}  // namespace detail

// Each name of `text` as names_in() reads them, at each occurrence (repeats
// too), in order, to `visit(std::string_view)`: for a caller that keeps its
// own set across many texts. A template: it is called once a name.
template <class Visit>
void each_name(std::string_view text, Visit&& visit) {
  using namespace detail;
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    const std::uint8_t c = kNameClass[p[i]];
    if (c == 0) {
      ++i;
      continue;
    }
    if (c == kEscape) {
      // JSON escapes in output that prints JSON: the escape stands for
      // its decoded character (a newline, a quote...), never for its letter.
      i += i + 1 < n ? escape_length(text.substr(i)) : 1;
      continue;
    }
    std::size_t j = i;
    std::uint8_t marks = 0;
    for (std::uint8_t k; j < n && ((k = kNameClass[p[j]]) & kNameChar); ++j) marks |= k;
    // A sentence's full stop, a label's colon ("absent.", "Claude:") are not
    // part of the name; what is left is marked by its own characters.
    std::size_t end = j;
    while (end > i && (p[end - 1] == '.' || p[end - 1] == ':')) --end;
    if (end != j) {
      marks = 0;
      for (std::size_t k = i; k < end; ++k) marks |= kNameClass[p[k]];
    }
    // A name: at least 6 characters, one of them a digit or _ . / :.
    if (end - i >= 6 && (marks & kNameMark)) visit(text.substr(i, end - i));
    i = j;
  }
}

// Whether a name (names_in) is a path: it holds a '/', or ends in a file
// extension ("L018.py"). What a fold or snip must never hide unnamed.
bool is_path_name(std::string_view name);

}  // namespace td::pruning
