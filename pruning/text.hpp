// Small text helpers the strategies share: UTF-8-safe cuts and lines.
#pragma once

#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace td::pruning::text {

inline bool is_continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// The largest character boundary <= i (a cut there never splits a UTF-8
// sequence). Invalid bytes count as one-byte characters: at most 3 bytes back.
inline std::size_t floor_boundary(std::string_view s, std::size_t i) {
  if (i >= s.size()) return s.size();
  std::size_t j = i;
  while (j > 0 && i - j < 3 && is_continuation(static_cast<unsigned char>(s[j]))) --j;
  return is_continuation(static_cast<unsigned char>(s[j])) ? i : j;
}

// The smallest character boundary >= i.
inline std::size_t ceil_boundary(std::string_view s, std::size_t i) {
  if (i >= s.size()) return s.size();
  std::size_t j = i;
  while (j < s.size() && j - i < 3 && is_continuation(static_cast<unsigned char>(s[j]))) ++j;
  return j;
}

// The lines of `s`, each with its '\n' (the last one may have none).
inline std::vector<std::string_view> lines(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (start < s.size()) {
    std::size_t nl = s.find('\n', start);
    std::size_t end = nl == std::string_view::npos ? s.size() : nl + 1;
    out.push_back(s.substr(start, end - start));
    start = end;
  }
  return out;
}

// Where `needle` first occurs in `s` at or after `from`, or npos, as
// string_view::find says; memmem skips through `s` by the needle's bytes
// where find() stops at every occurrence of its first byte.
inline std::size_t find(std::string_view s, std::string_view needle, std::size_t from = 0) {
  if (from > s.size() || needle.size() > s.size() - from) return std::string_view::npos;
  if (needle.empty()) return from;  // and memmem is never given a null pointer
  const void* hit = memmem(s.data() + from, s.size() - from, needle.data(), needle.size());
  return hit ? static_cast<std::size_t>(static_cast<const char*>(hit) - s.data()) : std::string_view::npos;
}

// A line without its line ending ("\n" or "\r\n").
inline std::string_view chomp(std::string_view line) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

// "1 line" / "12 lines".
inline std::string count_noun(std::size_t n, const char* singular, const char* plural) {
  return std::to_string(n) + " " + (n == 1 ? singular : plural);
}

}  // namespace td::pruning::text
