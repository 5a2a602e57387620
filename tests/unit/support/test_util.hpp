// Shared helpers for the unit tests: fixture loading, stream splitting, counting.
#pragma once

#include <cstddef>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace td::usage_test {

inline std::string read_fixture(const std::string& rel) {
  std::ifstream in(std::string(TD_FIXTURES) + "/" + rel, std::ios::binary);
  if (!in) throw std::runtime_error("missing fixture " + rel);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// How many times `needle` occurs in `s` (without overlaps).
inline std::size_t occurrences(std::string_view s, std::string_view needle) {
  std::size_t n = 0;
  for (std::size_t at = s.find(needle); at != std::string_view::npos; at = s.find(needle, at + needle.size())) ++n;
  return n;
}

// Pieces of `s` of `size` bytes each (the last may be shorter).
inline std::vector<std::string_view> fixed_split(std::string_view s, std::size_t size) {
  std::vector<std::string_view> out;
  for (std::size_t i = 0; i < s.size(); i += size) out.push_back(s.substr(i, size));
  return out;
}

// `s` cut at the given positions (ascending, inside s).
inline std::vector<std::string_view> cut_at(std::string_view s, std::vector<std::size_t> cuts) {
  std::vector<std::string_view> out;
  std::size_t prev = 0;
  for (auto c : cuts) {
    out.push_back(s.substr(prev, c - prev));
    prev = c;
  }
  out.push_back(s.substr(prev));
  return out;
}

// Random pieces of 1..max_piece bytes; deterministic per seed.
inline std::vector<std::string_view> random_split(std::string_view s, unsigned seed, std::size_t max_piece = 97) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::size_t> len(1, max_piece);
  std::vector<std::string_view> out;
  for (std::size_t i = 0; i < s.size();) {
    std::size_t n = len(rng);
    out.push_back(s.substr(i, n));
    i += n;
  }
  return out;
}

// Every way the tests cut a stream: piece sizes 1..64, some larger ones, the
// whole body at once, and random splits.
template <class F>
void for_each_split(std::string_view s, F&& f) {
  for (std::size_t k = 1; k <= 64; ++k) f(fixed_split(s, k), "fixed " + std::to_string(k));
  for (std::size_t k : {97u, 128u, 257u, 1000u, 4096u}) f(fixed_split(s, k), "fixed " + std::to_string(k));
  f(std::vector<std::string_view>{s}, std::string("whole"));
  for (unsigned seed = 1; seed <= 24; ++seed)
    f(random_split(s, seed, seed % 2 ? 13 : 300), "random seed " + std::to_string(seed));
}

}  // namespace td::usage_test
