#include "pruning/strategies/low_entropy.hpp"

#include <algorithm>
#include <optional>
#include <vector>

#include "pruning/memo.hpp"
#include "pruning/snip.hpp"
#include "pruning/strategies/common.hpp"
#include "pruning/text.hpp"

namespace td::pruning {

namespace {

bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool is_b64(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '+' || c == '/';
}

// What is left of a line once earlier drawings over it ('\r') are dropped.
std::string_view last_drawing(std::string_view line) {
  std::string_view body = text::chomp(line);
  std::size_t cr = body.rfind('\r');
  if (cr == std::string_view::npos) return line;
  return line.substr(cr + 1);
}

// Appends `line` with its blobs folded; `ref` (recall_ref(), may be empty)
// names the line in each fold's notice.
void append_folding_blobs(std::string& out, std::string_view line, std::uint64_t blob_min, std::string_view ref) {
  if (blob_min == 0 || line.size() < blob_min) {
    out += line;
    return;
  }
  std::size_t i = 0;
  while (i < line.size()) {
    if (!is_b64(line[i])) {
      out += line[i++];
      continue;
    }
    std::size_t j = i;
    bool hex = true, lower = false, upper = false, digit = false;
    while (j < line.size() && is_b64(line[j])) {
      char c = line[j++];
      hex = hex && is_hex(c);
      lower = lower || (c >= 'a' && c <= 'z');
      upper = upper || (c >= 'A' && c <= 'Z');
      digit = digit || (c >= '0' && c <= '9');
    }
    std::size_t k = j;
    while (k < line.size() && k - j < 2 && line[k] == '=') ++k;  // base64 padding
    std::size_t len = k - i;
    if (len >= blob_min && (hex || (lower && upper && digit))) {
      out.append(line.substr(i, 16));
      out += "[… " + std::to_string(len) + "-byte " + (hex ? "hex" : "base64") + " blob folded";
      out += ref;
      out += ']';
    } else {
      out.append(line.substr(i, k - i));
    }
    i = k;
  }
}

// The shape two near-identical lines share: digit runs -> '0', progress-bar
// blocks (U+2580..U+259F) dropped, space runs -> one space.
std::string shape_of(std::string_view line, bool& has_letter) {
  std::string s;
  has_letter = false;
  line = text::chomp(line);
  for (std::size_t i = 0; i < line.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(line[i]);
    if (c >= '0' && c <= '9') {
      if (s.empty() || s.back() != '0') s += '0';
      while (i + 1 < line.size() && line[i + 1] >= '0' && line[i + 1] <= '9') ++i;
    } else if (c == 0xE2 && i + 2 < line.size() && static_cast<unsigned char>(line[i + 1]) == 0x96 &&
               static_cast<unsigned char>(line[i + 2]) >= 0x80 && static_cast<unsigned char>(line[i + 2]) <= 0x9F) {
      i += 2;
    } else if (c == ' ' || c == '\t') {
      if (s.empty() || s.back() != ' ') s += ' ';
    } else {
      has_letter = has_letter || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
      s += static_cast<char>(c);
    }
  }
  return s;
}

std::string ensure_newline(std::string_view line) {
  std::string s{line};
  if (s.empty() || s.back() != '\n') s += '\n';
  return s;
}

// The paths lines [first, last) name that `shown` does not, in order, once
// each; more than `max` of them: nullopt (the run is not folded).
std::optional<std::vector<std::string_view>> hidden_paths(const std::vector<std::string>& ls, std::size_t first,
                                                          std::size_t last, std::string_view shown, std::uint32_t max) {
  std::vector<std::string_view> out;
  NameSet seen;
  for (std::size_t i = first; i < last; ++i)
    for (std::string_view name : names_in(ls[i])) {
      if (!is_path_name(name) || shown.find(name) != std::string_view::npos || !seen.insert(name)) continue;
      if (out.size() == max) return std::nullopt;
      out.push_back(name);
    }
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
  // Pass 1: redraws and blobs, line by line.
  std::vector<std::string> ls;
  for (std::string_view line : text::lines(text)) {
    std::string l;
    append_folding_blobs(l, last_drawing(line), blob_min_bytes, ref(ls.size() + 1, ls.size() + 1));
    ls.push_back(std::move(l));
  }
  // Pass 2: runs of identical or near-identical lines.
  std::string out;
  out.reserve(text.size());
  const std::size_t n = ls.size();
  const std::size_t run_min = std::max<std::uint32_t>(min_run, 3);
  std::vector<std::string> shapes(n);
  std::vector<bool> letter(n);
  for (std::size_t i = 0; i < n; ++i) {
    bool has = false;
    shapes[i] = shape_of(ls[i], has);
    letter[i] = has;
  }
  for (std::size_t i = 0; i < n;) {
    std::size_t same = i + 1;  // identical run [i, same)
    while (same < n && text::chomp(ls[same]) == text::chomp(ls[i])) ++same;
    std::size_t similar = i + 1;  // near-identical run [i, similar)
    if (letter[i])
      while (similar < n && shapes[similar] == shapes[i]) ++similar;
    bool blank = text::chomp(ls[i]).empty();
    std::optional<std::vector<std::string_view>> paths;
    if (same - i < run_min && similar - i >= run_min)
      paths = hidden_paths(ls, i + 1, similar - 1, ls[i] + ls[similar - 1], max_names);
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
