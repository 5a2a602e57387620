#include "config/yaml_fields.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

#include "config/suggest.hpp"
#include "config/units.hpp"

namespace td::config::detail {
namespace {

ConfigError at(const std::string& file, const YAML::Mark& mark, std::string reason) {
  // yaml-cpp marks are 0-based; -1 when a node has no place (e.g. empty input).
  bool placed = mark.line >= 0;
  return ConfigError{file, placed ? mark.line + 1 : 0, placed ? mark.column + 1 : 0, std::move(reason)};
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string to_string(Wide v) {
  if (v == 0) return "0";
  bool negative = v < 0;
  std::string out;
  while (v != 0) {
    int digit = static_cast<int>(v % 10);
    out.insert(out.begin(), static_cast<char>('0' + (negative ? -digit : digit)));
    v /= 10;
  }
  return negative ? "-" + out : out;
}

// A plain (unquoted) scalar: what YAML reads as a number or a boolean.
bool is_plain(const YAML::Node& n) { return n.IsScalar() && n.Tag() != "!"; }

bool parse_wide(std::string_view s, Wide& out) {
  bool negative = !s.empty() && s[0] == '-';
  if (negative || (!s.empty() && s[0] == '+')) s.remove_prefix(1);
  if (s.empty() || s.size() > 38) return false;
  Wide v = 0;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    v = v * 10 + (c - '0');
  }
  out = negative ? -v : v;
  return true;
}

}  // namespace

void Diagnostics::error(const YAML::Mark& mark, std::string reason) {
  errors.push_back(at(file, mark, std::move(reason)));
}

void Diagnostics::warning(const YAML::Mark& mark, std::string reason) {
  warnings.push_back(at(file, mark, std::move(reason)));
}

std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar:
      return "'" + node.Scalar() + "'";
    default:
      return "nothing";
  }
}

YAML::Mark value_mark(const YAML::Node& key, const YAML::Node& value) {
  return value.IsNull() || value.Mark().line < 0 ? key.Mark() : value.Mark();
}

bool read_value(Diagnostics& d, const std::string& path, const YAML::Mark& at, const YAML::Node& value, bool& out) {
  if (is_plain(value)) {
    std::string s = value.Scalar();
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (s == "true" || s == "yes" || s == "on") return out = true, true;
    if (s == "false" || s == "no" || s == "off") return out = false, true;
  }
  d.error(at, path + ": expected true or false, got " + describe(value));
  return false;
}

bool read_value(Diagnostics& d, const std::string& path, const YAML::Mark& at, const YAML::Node& value,
                std::string& out) {
  if (!value.IsScalar()) {
    d.error(at, path + ": expected a string, got " + describe(value));
    return false;
  }
  out = value.Scalar();
  return true;
}

bool read_value(Diagnostics& d, const std::string& path, const YAML::Mark& at, const YAML::Node& value,
                std::vector<std::string>& out) {
  if (value.IsScalar()) {
    out = {value.Scalar()};
    return true;
  }
  if (!value.IsSequence()) {
    d.error(at, path + ": expected a list of strings, got " + describe(value));
    return false;
  }
  bool ok = true;
  out.clear();
  for (std::size_t i = 0; i < value.size(); ++i) {
    YAML::Node item = value[i];
    if (!item.IsScalar()) {
      d.error(item.IsNull() ? at : item.Mark(),
              path + "[" + std::to_string(i) + "]: expected a string, got " + describe(item));
      ok = false;
    } else {
      out.push_back(item.Scalar());
    }
  }
  return ok;
}

bool read_real(Diagnostics& d, const std::string& path, const YAML::Mark& at, const YAML::Node& value,
               RealBounds bounds, double& out) {
  double v = 0;
  bool parsed = false;
  if (is_plain(value)) {
    const std::string& s = value.Scalar();
    const char* begin = s.data() + (!s.empty() && s[0] == '+' ? 1 : 0);
    auto [end, ec] = std::from_chars(begin, s.data() + s.size(), v);
    parsed = !s.empty() && ec == std::errc{} && end == s.data() + s.size() && std::isfinite(v);
  }
  if (!parsed) {
    d.error(at, path + ": expected a number, got " + describe(value));
    return false;
  }
  if (v < bounds.min || v > bounds.max) {
    auto fmt = [](double x) {
      char buf[32];
      auto [e, ec] = std::abs(x) < 1e15 ? std::to_chars(buf, buf + sizeof buf, x, std::chars_format::fixed)
                                        : std::to_chars(buf, buf + sizeof buf, x);
      return std::string(buf, e);
    };
    d.error(at, path + ": " + value.Scalar() + " is out of range (" + fmt(bounds.min) + " to " + fmt(bounds.max) + ")");
    return false;
  }
  out = v;
  return true;
}

bool read_integer(Diagnostics& d, const std::string& path, const YAML::Mark& at, const YAML::Node& value, Bounds bounds,
                  Wide& out) {
  // The unit follows from the field's name, so any *_ms field of any struct
  // takes "30s" and any *_bytes field takes "32MiB".
  bool duration = ends_with(path, "_ms");
  bool size = ends_with(path, "_bytes");
  const char* expected = duration ? "a duration (milliseconds, or e.g. \"500ms\", \"30s\", \"5m\")"
                         : size   ? "a size (bytes, or e.g. \"64KiB\", \"32MiB\")"
                                  : "an integer";
  Wide v = 0;
  bool parsed = false;
  if (value.IsScalar()) {
    const std::string& s = value.Scalar();
    if (is_plain(value) && parse_wide(s, v)) {
      parsed = true;
    } else if ((duration || size) && s.find_first_of("0123456789") != std::string::npos) {
      // Looks like a number with a unit: say what is wrong with it.
      auto r = duration ? parse_duration_ms(s) : parse_size_bytes(s);
      if (!r.ok()) {
        d.error(at, path + ": " + r.error);
        return false;
      }
      v = Wide(r.value);
      parsed = true;
    }
  }
  if (!parsed) {
    d.error(at, path + ": expected " + std::string(expected) + ", got " + describe(value));
    return false;
  }
  if (v < bounds.min || v > bounds.max) {
    std::string unit = duration ? " ms" : size ? " bytes" : "";
    d.error(at, path + ": " + to_string(v) + unit + " is out of range (" + to_string(bounds.min) + " to " +
                    to_string(bounds.max) + unit + ")");
    return false;
  }
  out = v;
  return true;
}

MapFields::MapFields(Diagnostics& d, const YAML::Node& map, std::string path)
    : d_(d), map_mark_(map.Mark()), path_(std::move(path)) {
  if (!map.IsMap()) return;
  for (const auto& kv : map) {  // not kv.first: yaml-cpp's -> points into a temporary
    YAML::Node key = kv.first;
    if (!key.IsScalar()) {
      d_.error(key.Mark(), where() + "keys must be strings, got " + describe(key));
      continue;
    }
    bool duplicate = false;
    for (const auto& e : entries_)
      if (e.name == key.Scalar()) {
        d_.error(key.Mark(), "duplicate key '" + path_ + key.Scalar() + "' (first at line " +
                                 std::to_string(e.key.Mark().line + 1) + ")");
        duplicate = true;
      }
    if (!duplicate) entries_.push_back(Entry{key.Scalar(), key, kv.second});
  }
}

MapFields::Entry* MapFields::use(std::string_view key) {
  if (std::find(known_.begin(), known_.end(), key) == known_.end()) known_.emplace_back(key);
  for (auto& e : entries_)
    if (e.name == key) {
      e.used = true;
      return &e;
    }
  return nullptr;
}

void MapFields::rename(std::string_view old_name, std::span<const std::string_view> new_names) {
  auto old = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.name == old_name; });
  if (old == entries_.end()) return;
  old->used = true;            // read under its new names, or reported below
  const Entry renamed = *old;  // entries_ grows below
  std::string names;
  for (std::size_t i = 0; i < new_names.size(); ++i)
    names += (i == 0 ? "" : i + 1 < new_names.size() ? ", " : " and ") + std::string(new_names[i]);
  for (std::string_view name : new_names)
    if (has(name))
      return d_.error(renamed.key.Mark(), path_ + renamed.name + ": the old name of " + names +
                                              ", which is given too; remove '" + renamed.name + "'");
  d_.warning(renamed.key.Mark(), path_ + renamed.name + ": deprecated name; use " + names);
  for (std::string_view name : new_names) entries_.push_back(Entry{std::string(name), renamed.key, renamed.value});
}

YAML::Node MapFields::take(std::string_view key) {
  Entry* e = use(key);
  return e ? e->value : YAML::Node(YAML::NodeType::Undefined);
}

bool MapFields::has(std::string_view key) const {
  for (const auto& e : entries_)
    if (e.name == key) return true;
  return false;
}

YAML::Node MapFields::value_of(std::string_view key) const {
  for (const auto& e : entries_)
    if (e.name == key) return e.value;
  return YAML::Node(YAML::NodeType::Undefined);
}

YAML::Mark MapFields::mark_of(std::string_view key) const {
  for (const auto& e : entries_)
    if (e.name == key) return value_mark(e.key, e.value);
  return map_mark_;
}

std::string MapFields::where() const { return path_.empty() ? "" : path_.substr(0, path_.size() - 1) + ": "; }

void MapFields::finish() {
  for (const auto& e : entries_) {
    if (e.used) continue;
    std::string reason = where() + "unknown key '" + e.name + "'";
    if (auto near = closest_word(e.name, known_); !near.empty())
      reason += " (did you mean '" + near + "'?)";
    else if (!known_.empty()) {
      reason += "; known keys:";
      for (std::size_t i = 0; i < known_.size(); ++i) reason += (i ? ", " : " ") + known_[i];
    }
    d_.error(e.key.Mark(), reason);
  }
}

bool expect_map(Diagnostics& d, const YAML::Node& node, const YAML::Mark& at, const std::string& path) {
  if (node.IsMap() || node.IsNull()) return true;
  d.error(at, path + ": expected a map of keys, got " + describe(node));
  return false;
}

}  // namespace td::config::detail
