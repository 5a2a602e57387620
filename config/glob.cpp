#include "config/glob.hpp"

#include <cstddef>

namespace td::config {
namespace {

// Matches a bracket expression starting at pattern[p] == '['. Returns the
// index just past its ']' (or npos when unterminated) and sets `hit`.
std::size_t match_class(std::string_view pattern, std::size_t p, char c, bool& hit) {
  std::size_t i = p + 1;
  bool negate = i < pattern.size() && (pattern[i] == '!' || pattern[i] == '^');
  if (negate) ++i;
  bool found = false;
  bool first = true;
  while (i < pattern.size() && (pattern[i] != ']' || first)) {
    first = false;
    char lo = pattern[i];
    if (lo == '\\' && i + 1 < pattern.size()) lo = pattern[++i];
    char hi = lo;
    if (i + 2 < pattern.size() && pattern[i + 1] == '-' && pattern[i + 2] != ']') {
      hi = pattern[i + 2];
      if (hi == '\\' && i + 3 < pattern.size()) hi = pattern[++i + 2];
      i += 2;
    }
    if (static_cast<unsigned char>(lo) <= static_cast<unsigned char>(c) &&
        static_cast<unsigned char>(c) <= static_cast<unsigned char>(hi))
      found = true;
    ++i;
  }
  if (i >= pattern.size()) return std::string_view::npos;
  hit = found != negate;
  return i + 1;
}

// Matches one pattern element at pattern[p] against c; returns the index past
// the element, or npos when it does not match.
std::size_t match_one(std::string_view pattern, std::size_t p, char c) {
  char pc = pattern[p];
  if (pc == '?') return p + 1;
  if (pc == '[') {
    bool hit = false;
    std::size_t next = match_class(pattern, p, c, hit);
    return next != std::string_view::npos && hit ? next : std::string_view::npos;
  }
  if (pc == '\\' && p + 1 < pattern.size()) return pattern[p + 1] == c ? p + 2 : std::string_view::npos;
  return pc == c ? p + 1 : std::string_view::npos;
}

}  // namespace

std::string glob_error(std::string_view pattern) {
  if (pattern.empty()) return "empty";
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '\\') {
      if (i + 1 == pattern.size()) return "ends with a lone '\\'";
      ++i;
    } else if (pattern[i] == '[') {
      bool hit = false;
      std::size_t next = match_class(pattern, i, 'x', hit);
      if (next == std::string_view::npos) return "'[' without a closing ']'";
      i = next - 1;
    }
  }
  return {};
}

bool glob_match(std::string_view pattern, std::string_view name) {
  // Iterative matching with one backtrack point for the last '*': linear in
  // practice, no recursion.
  std::size_t p = 0, n = 0;
  std::size_t star = std::string_view::npos, star_n = 0;
  while (n < name.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = ++p;
      star_n = n;
      continue;
    }
    if (p < pattern.size()) {
      std::size_t next = match_one(pattern, p, name[n]);
      if (next != std::string_view::npos) {
        p = next;
        ++n;
        continue;
      }
    }
    if (star == std::string_view::npos) return false;
    p = star;
    n = ++star_n;
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace td::config
