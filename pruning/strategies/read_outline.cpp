#include "pruning/strategies/read_outline.hpp"

#include <algorithm>
#include <array>

#include "pruning/snip.hpp"
#include "pruning/strategies/file_reads.hpp"

namespace td::pruning {

namespace {

// Words that start a declaration or an import in the languages agents edit
// most (TypeScript/JavaScript, Python, Go, Rust, Java/C#/C++ members).
constexpr std::array<std::string_view, 24> kOutlineWords = {
    "import ",   "export ", "class ",   "interface ", "enum ",   "type ",     "def ",       "async ",
    "function ", "public ", "private ", "protected ", "static ", "readonly ", "abstract ",  "constructor(",
    "struct ",   "fn ",     "pub ",     "func ",      "impl ",   "module ",   "namespace ", "template<"};

// The code of a line of a whole-file read as Claude Code's Read numbers it,
// after "    12→"; empty for any other line. Only those: `grep -n`, `nl` or
// `cat -n` outputs show parts of files, and keeping their declarations cost
// more on the charged replay than the recalls it spared (docs/benchmarks.md
// §The outline of a read).
std::string_view code_of(std::string_view line) {
  std::size_t i = 0;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  const std::size_t digits = i;
  while (i < line.size() && line[i] >= '0' && line[i] <= '9') ++i;
  if (i == digits || i == line.size()) return {};
  constexpr std::string_view kArrow = "\u2192";
  return line.substr(i).starts_with(kArrow) ? line.substr(i + kArrow.size()) : std::string_view{};
}

}  // namespace

bool numbered_as_read(std::string_view text) {
  // Claude Code 2.1.2xx numbers "1<tab>", unpadded (`cat -n` and `nl` pad to
  // six columns); its outline is not kept (docs/benchmarks.md §Claude Code's
  // newer Read).
  if (text.starts_with("1\t")) return true;
  std::size_t i = 0;
  while (i < text.size() && text[i] == ' ') ++i;
  return text.substr(i).starts_with("1\u2192");
}

bool is_outline_line(std::string_view code) {
  while (!code.empty() && (code.front() == ' ' || code.front() == '\t')) code.remove_prefix(1);
  if (code.starts_with("from ")) return code.find(" import ") != std::string_view::npos;  // Python's
  return std::any_of(kOutlineWords.begin(), kOutlineWords.end(),
                     [&](std::string_view w) { return code.starts_with(w); });
}

std::vector<std::uint64_t> read_outline(std::string_view text) {
  std::vector<std::uint64_t> keys;
  if (shown_line_numbers(text).empty()) return keys;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    if (is_outline_line(code_of(line)))
      if (const std::uint64_t k = copy_line_key(line, 1)) keys.push_back(k);
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

}  // namespace td::pruning
