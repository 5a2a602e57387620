#include "config/units.hpp"

#include <cctype>
#include <cmath>
#include <string>

namespace td::config {
namespace {

struct Unit {
  std::string_view name;
  double factor;
};

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

// Sums "<number><unit>" terms (one or more; a bare integer needs no unit).
// `exact` units must divide evenly: 1.5ms is not a whole number of ms.
template <std::size_t N>
Parsed<std::uint64_t> parse_with_units(std::string_view text, const Unit (&units)[N], std::string_view what) {
  auto bad = [&](std::string_view why) {
    return Parsed<std::uint64_t>::fail("invalid " + std::string(what) + " '" + std::string(text) +
                                       "': " + std::string(why));
  };
  std::size_t i = 0;
  auto skip_spaces = [&] {
    while (i < text.size() && text[i] == ' ') ++i;
  };
  skip_spaces();
  if (i == text.size()) return bad("empty");
  long double total = 0;
  int terms = 0;
  while (i < text.size()) {
    std::size_t start = i;
    while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
    std::string number(text.substr(start, i - start));
    if (number.empty() || number.front() == '.' || number.back() == '.' || number.find('.') != number.rfind('.'))
      return bad(text[start] == '-' ? "must not be negative" : "expected a number");
    skip_spaces();
    std::size_t ustart = i;
    while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
    std::string_view unit_name = text.substr(ustart, i - ustart);
    skip_spaces();
    long double factor = 0;
    if (unit_name.empty()) {
      // A bare number is only allowed alone and whole: "1500" ms, "4096" bytes.
      if (terms > 0 || i < text.size() || number.find('.') != std::string::npos)
        return bad("a unit is needed after " + number);
      factor = 1;
    } else {
      for (const auto& u : units)
        if (iequals(u.name, unit_name)) factor = u.factor;
      if (factor == 0) {
        std::string known;
        for (const auto& u : units) known += (known.empty() ? "" : ", ") + std::string(u.name);
        return bad("unknown unit '" + std::string(unit_name) + "' (use " + known + ")");
      }
    }
    if (number.size() > 30) return bad("too large");
    total += std::stold(number) * factor;
    ++terms;
  }
  if (total > 1.8e19L) return bad("too large");
  long double rounded = std::floor(total);
  if (total - rounded > 1e-9L) return bad("not a whole number of " + std::string(units[0].name));
  return {static_cast<std::uint64_t>(rounded), {}};
}

constexpr Unit kDurationUnits[] = {{"ms", 1}, {"s", 1000}, {"m", 60'000}, {"h", 3'600'000}};
constexpr Unit kSizeUnits[] = {{"B", 1},
                               {"KB", 1e3},
                               {"MB", 1e6},
                               {"GB", 1e9},
                               {"KiB", 1024.0},
                               {"MiB", 1024.0 * 1024},
                               {"GiB", 1024.0 * 1024 * 1024}};

}  // namespace

Parsed<std::uint64_t> parse_duration_ms(std::string_view text) {
  return parse_with_units(text, kDurationUnits, "duration");
}

Parsed<std::uint64_t> parse_size_bytes(std::string_view text) { return parse_with_units(text, kSizeUnits, "size"); }

}  // namespace td::config
