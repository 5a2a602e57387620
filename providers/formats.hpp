// The per-format halves of parse() and write() (internal to providers/).
// request.cpp does what all formats share: JSON parsing, deciding what
// changed, rebuilding the message array, the system field, applying edits.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "json/splice.hpp"
#include "providers/request.hpp"

namespace td::providers::detail {

using pruning::Message;
using pruning::Part;

struct FormatOps {
  // Fills r.conversation, r.messages, r.parts, r.array, r.system, model,
  // stream from r.doc (already parsed). False with *err on a shape we do not
  // understand (the request is then forwarded untouched).
  bool (*parse)(ParsedRequest& r, std::string& err);
  // The array item(s) for original message m, which changed (any way). May
  // write nothing: the message then disappears (Responses items with no parts).
  bool (*render_changed)(const ParsedRequest& r, std::string_view body, const Message& m, std::string& out,
                         std::string& err);
  // The array item(s) for a message the pipeline added.
  bool (*render_new)(const ParsedRequest& r, const Message& m, std::string& out, std::string& err);
  // The system field's value for these (non-removed, system_field) messages.
  bool (*render_system)(const ParsedRequest& r, std::string_view body, const std::vector<const Message*>& system,
                        std::string& out, std::string& err);
  const char* system_key;  // the member to add when the body had no system field
  const char* array_key;   // the root member holding the message elements
};

// Each format's, in its folder's request.cpp (and in its FormatAdapter,
// providers/format_adapter.hpp).
extern const FormatOps kOpenAIChatOps;
extern const FormatOps kAnthropicOps;
extern const FormatOps kGeminiOps;
extern const FormatOps kOpenAIResponsesOps;
// Anthropic's cache breakpoint at the stale frontier (FormatAdapter's cache rule).
std::uint32_t anthropic_cache_anchors_free(std::string_view body);
bool anthropic_cache_anchor_edit(const ParsedRequest& r, const Message& m, const Part& p, json::Edit& out);

// Shared parse helpers.
// Finds the members named `keys` of object `obj` in one pass (kNone where
// absent). False if one of them appears twice: such a body means different
// things to different parsers, so we leave it alone.
template <std::size_t N>
bool pick(const json::Document& d, std::uint32_t obj, const std::array<std::string_view, N>& keys,
          std::array<std::uint32_t, N>& out) {
  out.fill(json::kNone);
  for (std::uint32_t c = d.node(obj).first; c != json::kNone; c = d.node(c).next) {
    for (std::size_t k = 0; k < N; ++k) {
      if (!d.key_is(c, keys[k])) continue;
      if (out[k] != json::kNone) return false;
      out[k] = c;
      break;
    }
  }
  return true;
}
inline json::Type type_of(const json::Document& d, std::uint32_t n) {
  return n == json::kNone ? json::Type::Null : d.node(n).type;
}
inline bool is(const json::Document& d, std::uint32_t n, json::Type t) {
  return n != json::kNone && d.node(n).type == t;
}
// Position of child `node` among the children of `container`, -1 if absent.
int child_pos(const json::Document& d, std::uint32_t container, std::uint32_t node);

// Adds a part (and its source) to the message being built.
Part& add_part(ParsedRequest& r, Message& m, pruning::PartKind kind, std::uint32_t elem, Field field, TextSlot slot);
inline TextSlot string_slot(const json::Document& d, std::uint32_t node) {
  return TextSlot{TextSlot::Kind::String, d.node(node).begin, d.node(node).end};
}
inline TextSlot insert_slot(const json::Document& d, std::uint32_t obj, const char* key) {
  const json::Node& n = d.node(obj);
  return TextSlot{TextSlot::Kind::Insert, n.end - 1, n.end - 1, key, n.count == 0};
}
// Bytes outside the messages and system field (what is sent but never pruned).
void fill_overhead(ParsedRequest& r, const std::vector<std::uint32_t>& tool_nodes);

// Shared render helper: original message m with its part edits applied when
// its part list is unchanged; otherwise false with *restructure set.
bool render_in_place(const ParsedRequest& r, std::string_view body, const Message& m, std::string& out,
                     std::string& err);

}  // namespace td::providers::detail
