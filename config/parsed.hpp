// A value parsed from text, or why it could not be: the small result type the
// config parsers return (errors are values here, never exceptions).
#pragma once

#include <string>
#include <utility>

namespace td::config {

template <class T>
struct Parsed {
  T value{};
  std::string error;  // empty: ok

  bool ok() const { return error.empty(); }
  static Parsed fail(std::string why) { return Parsed{T{}, std::move(why)}; }
};

}  // namespace td::config
