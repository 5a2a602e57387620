// Shared helpers for the config tests.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <string_view>

#include "config/load.hpp"

namespace td::config::test {

// All errors of a load, one per line, for failure messages.
inline std::string all_errors(const LoadResult& r) {
  std::string out;
  for (const auto& e : r.errors) out += format_error(e) + "\n";
  return out;
}

// Whether some error sits at line:column and its reason contains `text`.
inline bool has_error(const LoadResult& r, int line, int column, std::string_view text) {
  for (const auto& e : r.errors)
    if (e.line == line && e.column == column && e.reason.find(text) != std::string::npos) return true;
  return false;
}

// Loads `yaml` and expects exactly one error, at line:column, containing `text`.
inline void expect_one_error(std::string_view yaml, int line, int column, std::string_view text) {
  LoadResult r = load_string(yaml, "t.yaml");
  INFO("yaml:\n" << yaml << "\nerrors:\n" << all_errors(r));
  CHECK(r.errors.size() == 1);
  CHECK(has_error(r, line, column, text));
}

}  // namespace td::config::test
