// The wire fields behind GenerationSettings, per format, and how one is
// found in a parsed body (internal to providers/: generation_settings.cpp, and
// the formats' adapters, whose `settings` list each format's fields).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "providers/generation_settings.hpp"
#include "json/json_spans.hpp"

namespace td::providers::generation {

using json::kNone;

enum class Kind : std::uint8_t { String, Integer, Bool };

struct Key {
  std::string_view camel;
  std::string_view snake = {};  // Gemini's other protobuf JSON spelling; empty: one spelling
};

// One wire field: where a setting lives in one format.
struct Field {
  Setting setting;
  Kind kind;
  std::uint8_t depth;  // members from the root to the value
  std::array<Key, 3> path;
  std::string_view wire;  // the dotted path, for wire_field() and messages
  bool twin = false;      // a second spelling of the setting (chat max_tokens):
                          // written where present, never inserted
};

// A format's fields are its FormatAdapter's `settings` (providers/format_adapter.hpp).
// The field of setting `s` (its twin when `twin`), fields(api).size() if none.
std::size_t index_of(std::span<const Field> fs, Setting s, bool twin = false);

// Calls f with the optional member of `g` that holds setting `s`.
template <class G, class F>
decltype(auto) visit(G& g, Setting s, F&& f) {
  switch (s) {
    case Setting::reasoning_effort:
      return f(g.reasoning_effort);
    case Setting::thinking_type:
      return f(g.thinking_type);
    case Setting::thinking_budget:
      return f(g.thinking_budget);
    case Setting::thinking_level:
      return f(g.thinking_level);
    case Setting::include_thoughts:
      return f(g.include_thoughts);
    case Setting::max_output_tokens:
      break;
  }
  return f(g.max_output_tokens);
}

bool has(const GenerationSettings& g, Setting s);
bool same(const GenerationSettings& a, const GenerationSettings& b, Setting s);
void copy(GenerationSettings& to, const GenerationSettings& from, Setting s);
// The JSON text of the (set) value of `s`.
std::string json_value(const GenerationSettings& g, Setting s);

// A field's member in the body.
struct Found {
  enum class State : std::uint8_t { absent, value, problem } state = State::absent;
  std::uint32_t leaf = kNone;  // the member holding the value (null included)
  GenerationSettings value;    // this field alone, when state == value
  std::string problem;
};

// The member of `obj` spelled `k`: false (with *why) when it is there twice.
bool member(const json::Document& d, std::uint32_t obj, const Key& k, std::uint32_t& out, std::string& why);
// Field `f` in the body `d` (a parsed object).
Found look(const json::Document& d, const Field& f);

}  // namespace td::providers::generation
