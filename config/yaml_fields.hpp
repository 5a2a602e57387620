// Reading typed fields out of a YAML map, collecting every error with its
// line and column instead of stopping at the first. Internal to config/.
//
// MapFields is a visitor: `fields("threads", cfg.threads)` reads one key into
// one field by the field's type, so any struct with a visit() method (such as
// pruning::Profile) becomes configurable with no code here. Keys no visit
// asked for are reported as unknown by finish(), with a "did you mean".
//
// Field types: bool, any integer, double, std::string,
// std::vector<std::string> (a list, or one string for a one-item list).
// Integer fields named *_ms also take durations ("30s", "500ms", "5m") and
// fields named *_bytes also take sizes ("32MiB"); see units.hpp.
#pragma once

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <concepts>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "config/config.hpp"

namespace td::config::detail {

using Wide = __int128;  // holds every int64 and uint64 value

// Errors and warnings of one load, with the file name they are reported in.
struct Diagnostics {
  std::string file;
  std::vector<ConfigError> errors;
  std::vector<ConfigError> warnings;

  void error(const YAML::Mark& at, std::string reason);
  void warning(const YAML::Mark& at, std::string reason);
};

// Inclusive range for a numeric field, in the field's unit (ms for *_ms).
struct Bounds {
  Wide min;
  Wide max;
};
struct RealBounds {
  double min;
  double max;
};

template <class T>
Bounds type_bounds() {
  return {Wide(std::numeric_limits<T>::min()), Wide(std::numeric_limits<T>::max())};
}

// How a node looks, for "expected X, got Y" messages.
std::string describe(const YAML::Node& node);

// Where to report a problem with `value`: its own mark, or the key's mark
// when the value is empty (yaml-cpp marks an empty value at the next token).
YAML::Mark value_mark(const YAML::Node& key, const YAML::Node& value);

// One-value readers: return false (and report) when the value is unusable.
bool read_value(Diagnostics& d, const std::string& path, const YAML::Mark& at, const YAML::Node& value, bool& out);
bool read_value(Diagnostics& d, const std::string& path, const YAML::Mark& at, const YAML::Node& value,
                std::string& out);
bool read_value(Diagnostics& d, const std::string& path, const YAML::Mark& at, const YAML::Node& value,
                std::vector<std::string>& out);
bool read_real(Diagnostics& d, const std::string& path, const YAML::Mark& at, const YAML::Node& value,
               RealBounds bounds, double& out);
bool read_integer(Diagnostics& d, const std::string& path, const YAML::Mark& at, const YAML::Node& value, Bounds bounds,
                  Wide& out);

class MapFields {
 public:
  // `map` must be a map node (check with expect_map). `path` prefixes field
  // names in messages: "limits." gives "limits.max_body_bytes: ...".
  MapFields(Diagnostics& d, const YAML::Node& map, std::string path);

  template <class T>
  void operator()(std::string_view key, T& field) {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
      (*this)(key, field, type_bounds<T>());
    else if constexpr (std::is_floating_point_v<T>)
      (*this)(key, field, RealBounds{-std::numeric_limits<double>::max(), std::numeric_limits<double>::max()});
    else
      read_plain(key, field);
  }

  template <std::integral T>
  void operator()(std::string_view key, T& field, Bounds bounds) {
    const Entry* e = use(key);
    if (!e) return;
    Bounds b{std::max(bounds.min, type_bounds<T>().min), std::min(bounds.max, type_bounds<T>().max)};
    Wide v = 0;
    if (read_integer(d_, path_ + e->key.Scalar(), value_mark(e->key, e->value), e->value, b, v))
      field = static_cast<T>(v);
  }

  template <std::floating_point T>
  void operator()(std::string_view key, T& field, RealBounds bounds) {
    const Entry* e = use(key);
    if (!e) return;
    double v = 0;
    if (read_real(d_, path_ + e->key.Scalar(), value_mark(e->key, e->value), e->value, bounds, v))
      field = static_cast<T>(v);
  }

  // `old_name` was renamed `new_names` (a key split in two has two): a value
  // given under the old name is read as each new one, with a deprecation
  // warning; given under a new name too, it is an error. Call before the
  // visits. Messages about the value name the key as written.
  void rename(std::string_view old_name, std::span<const std::string_view> new_names);

  // The key's value node (undefined when absent), marked as known and used,
  // for values that need more than a plain field.
  YAML::Node take(std::string_view key);
  bool has(std::string_view key) const;
  // The key's value node, undefined when absent (does not mark it used).
  YAML::Node value_of(std::string_view key) const;
  // Where to report a problem with key's value (the map's own mark if absent).
  YAML::Mark mark_of(std::string_view key) const;
  const std::string& path() const { return path_; }
  Diagnostics& diagnostics() { return d_; }

  // Reports every key no visit asked for. Call once, after all visits.
  void finish();

 private:
  struct Entry {
    std::string name;
    YAML::Node key, value;
    bool used = false;
  };

  template <class T>
  void read_plain(std::string_view key, T& field) {
    static_assert(
        std::is_same_v<T, bool> || std::is_same_v<T, std::string> || std::is_same_v<T, std::vector<std::string>>,
        "config: this field type has no YAML reader; add one in config/yaml_fields");
    const Entry* e = use(key);
    if (!e) return;
    T v{};
    if (read_value(d_, path_ + e->key.Scalar(), value_mark(e->key, e->value), e->value, v)) field = std::move(v);
  }

  Entry* use(std::string_view key);
  std::string where() const;  // "limits: " for messages about the map itself

  Diagnostics& d_;
  YAML::Mark map_mark_;
  std::string path_;
  std::vector<Entry> entries_;
  std::vector<std::string> known_;
};

// Whether `node` is a map; reports "<path>: expected a map" otherwise. An empty
// value (`limits:` with nothing under it) counts as an empty map.
bool expect_map(Diagnostics& d, const YAML::Node& node, const YAML::Mark& at, const std::string& path);

}  // namespace td::config::detail
