#include "pruning/strategies/low_entropy.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <deque>
#include <optional>
#include <vector>

#include "pruning/memo.hpp"
#include "pruning/snip.hpp"
#include "pruning/strategies/common.hpp"
#include "pruning/text.hpp"

namespace td::pruning {

namespace {

// Each byte's class for blob folding, looked up once a byte.
constexpr std::uint8_t kB64 = 1, kHex = 2, kLower = 4, kUpper = 8, kDigit = 16;
constexpr std::array<std::uint8_t, 256> kBlobClass = [] {
  std::array<std::uint8_t, 256> t{};
  for (int c = '0'; c <= '9'; ++c) t[c] = kB64 | kHex | kDigit;
  for (int c = 'a'; c <= 'z'; ++c) t[c] = kB64 | kLower | (c <= 'f' ? kHex : 0);
  for (int c = 'A'; c <= 'Z'; ++c) t[c] = kB64 | kUpper | (c <= 'F' ? kHex : 0);
  t['+'] = t['/'] = kB64;
  return t;
}();

// What is left of a line once earlier drawings over it ('\r') are dropped.
std::string_view last_drawing(std::string_view line) {
  std::string_view body = text::chomp(line);
  // Most lines have no '\r': memchr says so at a fraction of rfind's cost.
  if (std::memchr(body.data(), '\r', body.size()) == nullptr) return line;
  return line.substr(body.rfind('\r') + 1);
}

// The blob runs of `line` at least `blob_min` bytes long, each as [begin, end)
// with whether it is hex: base64 or hex characters (with up to two '='
// after), hex or mixing lower case, upper case and digits.
struct Blob {
  std::size_t begin, end;
  bool hex;
};
std::vector<Blob> blobs_in(std::string_view line, std::uint64_t blob_min) {
  std::vector<Blob> out;
  const auto* p = reinterpret_cast<const unsigned char*>(line.data());
  const std::size_t n = line.size();
  std::size_t i = 0;
  while (i < n) {
    if (!(kBlobClass[p[i]] & kB64)) {
      ++i;
      continue;
    }
    std::size_t j = i;
    std::uint8_t any = 0, all = 0xFF;
    for (std::uint8_t c; j < n && ((c = kBlobClass[p[j]]) & kB64); ++j) any |= c, all &= c;
    std::size_t k = j;
    while (k < n && k - j < 2 && line[k] == '=') ++k;  // base64 padding
    const bool hex = all & kHex;
    if (k - i >= blob_min && (hex || (any & (kLower | kUpper | kDigit)) == (kLower | kUpper | kDigit)))
      out.push_back({i, k, hex});
    i = k;
  }
  return out;
}

// `line` with its blobs folded; `ref` (recall_ref(), may be empty) names the
// line in each fold's notice.
std::string fold_blobs(std::string_view line, const std::vector<Blob>& blobs, std::string_view ref) {
  std::string out;
  std::size_t at = 0;
  for (const Blob& b : blobs) {
    out.append(line.substr(at, b.begin - at));
    out.append(line.substr(b.begin, 16));
    out += "[… " + std::to_string(b.end - b.begin) + "-byte " + (b.hex ? "hex" : "base64") + " blob folded";
    out += ref;
    out += ']';
    at = b.end;
  }
  out.append(line.substr(at));
  return out;
}

// Appends the shape two near-identical lines share to `s`: digit runs ->
// '0', progress-bar blocks (U+2580..U+259F) dropped, space runs -> one space.
// Whether the line has a letter.
bool append_shape(std::string& s, std::string_view line) {
  const std::size_t start = s.size();
  bool has_letter = false;
  line = text::chomp(line);
  for (std::size_t i = 0; i < line.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(line[i]);
    const bool open = s.size() == start;
    if (c >= '0' && c <= '9') {
      if (open || s.back() != '0') s += '0';
      while (i + 1 < line.size() && line[i + 1] >= '0' && line[i + 1] <= '9') ++i;
    } else if (c == 0xE2 && i + 2 < line.size() && static_cast<unsigned char>(line[i + 1]) == 0x96 &&
               static_cast<unsigned char>(line[i + 2]) >= 0x80 && static_cast<unsigned char>(line[i + 2]) <= 0x9F) {
      i += 2;
    } else if (c == ' ' || c == '\t') {
      if (open || s.back() != ' ') s += ' ';
    } else {
      has_letter = has_letter || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
      s += static_cast<char>(c);
    }
  }
  return has_letter;
}

std::string ensure_newline(std::string_view line) {
  std::string s{line};
  if (s.empty() || s.back() != '\n') s += '\n';
  return s;
}

// The paths lines [first, last) name that `shown` does not, in order, once
// each; more than `max` of them: nullopt (the run is not folded).
std::optional<std::vector<std::string_view>> hidden_paths(const std::vector<std::string_view>& ls, std::size_t first,
                                                          std::size_t last, std::string_view shown, std::uint32_t max) {
  std::vector<std::string_view> out;
  NameSet seen;
  bool over = false;
  for (std::size_t i = first; i < last && !over; ++i)
    each_name(ls[i], [&](std::string_view name) {
      if (over || !is_path_name(name) || shown.find(name) != std::string_view::npos || !seen.insert(name)) return;
      if (out.size() == max)
        over = true;
      else
        out.push_back(name);
    });
  if (over) return std::nullopt;
  return out;
}

}  // namespace

std::string fold_text(std::string_view text, std::uint32_t min_run, std::uint64_t blob_min_bytes,
                      std::uint32_t max_names, bool recall) {
  // Each fold names the lines it hid of `text` (1-based), by its handle.
  const std::string handle = recall ? recall_handle(text) : std::string();
  auto ref = [&](std::size_t first, std::size_t last) {
    return recall ? recall_ref(handle, first, last) : std::string();
  };
  // Pass 1: redraws and blobs, line by line; a line left as it was stays a
  // view of `text`, one with a blob folded is kept in `folded`.
  std::vector<std::string_view> ls;
  std::deque<std::string> folded;
  for (std::string_view line : text::lines(text)) {
    line = last_drawing(line);
    if (blob_min_bytes > 0 && line.size() >= blob_min_bytes) {
      const std::vector<Blob> blobs = blobs_in(line, blob_min_bytes);
      if (!blobs.empty()) line = folded.emplace_back(fold_blobs(line, blobs, ref(ls.size() + 1, ls.size() + 1)));
    }
    ls.push_back(line);
  }
  // Pass 2: runs of identical or near-identical lines.
  std::string out;
  out.reserve(text.size());
  const std::size_t n = ls.size();
  const std::size_t run_min = std::max<std::uint32_t>(min_run, 3);
  // Every line's shape in one string: shapes[i] is [shape_at[i], shape_at[i + 1]).
  std::string shape_text;
  shape_text.reserve(text.size());
  std::vector<std::size_t> shape_at(n + 1, 0);
  std::vector<bool> letter(n);
  for (std::size_t i = 0; i < n; ++i) {
    letter[i] = append_shape(shape_text, ls[i]);
    shape_at[i + 1] = shape_text.size();
  }
  auto shape = [&](std::size_t i) {
    return std::string_view(shape_text).substr(shape_at[i], shape_at[i + 1] - shape_at[i]);
  };
  for (std::size_t i = 0; i < n;) {
    std::size_t same = i + 1;  // identical run [i, same)
    while (same < n && text::chomp(ls[same]) == text::chomp(ls[i])) ++same;
    std::size_t similar = i + 1;  // near-identical run [i, similar)
    if (letter[i])
      while (similar < n && shape(similar) == shape(i)) ++similar;
    bool blank = text::chomp(ls[i]).empty();
    std::optional<std::vector<std::string_view>> paths;
    if (same - i < run_min && similar - i >= run_min)
      paths = hidden_paths(ls, i + 1, similar - 1, std::string(ls[i]) += ls[similar - 1], max_names);
    if (same - i >= run_min && !blank) {
      out += ensure_newline(ls[i]);
      out += "[… previous line repeated " + std::to_string(same - i - 1) + " more times" + ref(i + 2, same) + "]\n";
      if (same == n && !ls[n - 1].empty() && ls[n - 1].back() != '\n') out.pop_back();
      i = same;
    } else if (paths) {
      out += ensure_newline(ls[i]);
      out += "[… " + std::to_string(similar - i - 2) + " similar lines folded";
      if (!paths->empty()) out += ", naming";
      for (std::string_view p : *paths) (out += ' ') += p;
      out += ref(i + 2, similar - 1);
      out += "]\n";
      out += ls[similar - 1];
      i = similar;
    } else {
      out += ls[i++];
    }
  }
  if (out.size() >= text.size()) return std::string{text};
  return out;
}

StrategyStats low_entropy(Conversation& conv, const LowEntropyOptions& opt, std::uint32_t limit,
                          Memo<std::string>* folds) {
  StrategyStats st{.name = "low_entropy"};
  if (!opt.low_entropy) return st;
  auto& msgs = conv.messages;
  if (limit > msgs.size()) limit = static_cast<std::uint32_t>(msgs.size());
  const std::uint64_t salt = memo_salt(
      "fold_text", {opt.low_entropy_min_run, opt.low_entropy_blob_min_bytes, opt.low_entropy_names, opt.recall});
  detail::ToolNames names(opt.exclude_tools);
  for (std::uint32_t i = 0; i < limit; ++i) {
    Message& m = msgs[i];
    names.learn(m);
    if (m.removed) continue;
    for (Part& p : m.parts) {
      if (p.kind != PartKind::ToolResult || !p.editable || p.text.size() < 64) continue;
      if (detail::excluded_tool(opt.exclude_tools, names.of_result(p))) continue;
      auto folded = memoized(folds, salt, p, [&](std::string_view t) -> std::optional<std::string> {
        std::string f =
            fold_text(t, opt.low_entropy_min_run, opt.low_entropy_blob_min_bytes, opt.low_entropy_names, opt.recall);
        if (f.size() >= t.size()) return std::nullopt;
        return f;
      });
      if (!folded) continue;
      st.add(i, p.text.size(), folded->size());
      cut_text(m, p, *folded, opt.recall);
    }
  }
  return st;
}

}  // namespace td::pruning
