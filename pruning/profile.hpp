// A pruning profile: every constant a strategy uses, with defaults taken from
// the seed systems (../shared/reference/seed-systems.md) unless replay
// measured better ones. config/ parses a YAML profile by visiting the fields
// by name, so a field added here is configurable at once, and a key that is
// not a field is an error.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace td::pruning {

struct Profile {
  std::string name = "default";
  std::vector<std::string> models = {"*"};  // globs on the request's model
  bool enabled = true;                      // false: forward untouched
  bool shadow = false;                      // compute savings, change nothing

  // Usage: ask OpenAI streams for usage and splice it back out (issue 4).
  bool stream_usage = true;

  template <class Visitor>
  void visit(Visitor&& v) {
    v("models", models);
    v("enabled", enabled);
    v("shadow", shadow);
    v("stream_usage", stream_usage);
  }
};

}  // namespace td::pruning
