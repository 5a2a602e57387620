// Anthropic Messages (/v1/messages).
//
// system: a string or text blocks (one system_field message). messages[]:
// role user|assistant|system, content a string or blocks. A system message
// inside messages (Claude Code puts its environment block there) is Role::System
// where it stands: like the top-level system prompt, never pruned nor moved,
// its other members (output_config...) kept. Blocks: text, tool_use (ToolCall,
// text = the input object's JSON), tool_result (ToolResult; string or block
// content, is_error kept; with images or several cache-marked blocks it is not
// editable), thinking (Thinking with its signature: Anthropic rejects a
// modified thinking block, so it may be dropped but not edited),
// redacted_thinking, image, document, search_result, tool_reference,
// container_upload, server-side and MCP blocks, tool additions (Opaque). A user
// message made only of tool_result blocks gets Role::Tool. Edits splice only
// the text value, so cache_control and every other field of a block stay where
// they stand. Messages at or before the newest cache_control breakpoint (or
// all of them under top-level automatic caching) are cache_protected.
#include <string>

#include "providers/formats.hpp"
#include "providers/parsed_message_memo.hpp"
#include "providers/part_splice.hpp"

namespace td::providers::detail {
namespace {

using json::Type;
using pruning::PartKind;
using pruning::Role;

enum { kType, kText, kId, kName, kInput, kToolUseId, kContent, kIsError, kThinking, kSignature, kCacheControl, kN };
constexpr std::array<std::string_view, kN> kBlockKeys{"type",     "text",        "id",           "name",
                                                      "input",    "tool_use_id", "content",      "is_error",
                                                      "thinking", "signature",   "cache_control"};

bool has_cache_control(const json::Document& d, std::uint32_t n) {
  return n != json::kNone && d.node(n).type != Type::Null;
}

// tool_result content given as blocks: its text, and how an edit is written.
TextSlot tool_result_blocks(const json::Document& d, std::uint32_t arr, std::string& text, bool& marked) {
  bool all_text = true;
  std::uint32_t only_text = json::kNone;
  for (std::uint32_t c = d.node(arr).first; c != json::kNone; c = d.node(c).next) {
    std::array<std::uint32_t, kN> f;
    if (!is(d, c, Type::Object) || !pick(d, c, kBlockKeys, f)) {
      all_text = false;
      continue;
    }
    marked = marked || has_cache_control(d, f[kCacheControl]);
    if (d.str_is(f[kType], "text") && is(d, f[kText], Type::String)) {
      if (!text.empty()) text += '\n';
      d.append_str(f[kText], text);
      if (d.node(arr).count == 1) only_text = f[kText];
    } else {
      all_text = false;
    }
  }
  if (only_text != json::kNone) return string_slot(d, only_text);  // keeps the block's cache_control
  if (all_text && !marked) return string_slot(d, arr);
  return {};
}

bool parse_block(ParsedRequest& r, Message& m, std::uint32_t c, bool& breakpoint, std::string& err) {
  const auto& d = r.doc;
  std::array<std::uint32_t, kN> f;
  if (!is(d, c, Type::Object) || !pick(d, c, kBlockKeys, f) || !is(d, f[kType], Type::String)) {
    err = "malformed content block";
    return false;
  }
  breakpoint = breakpoint || has_cache_control(d, f[kCacheControl]);
  if (d.str_is(f[kType], "text") && is(d, f[kText], Type::String)) {
    add_part(r, m, PartKind::Text, c, Field::Content, string_slot(d, f[kText])).text = d.str(f[kText]);
  } else if (d.str_is(f[kType], "tool_use")) {
    const bool obj = is(d, f[kInput], Type::Object);
    TextSlot slot =
        obj ? TextSlot{TextSlot::Kind::JsonObject, d.node(f[kInput]).begin, d.node(f[kInput]).end} : TextSlot{};
    Part& p = add_part(r, m, PartKind::ToolCall, c, Field::Content, slot);
    if (is(d, f[kId], Type::String)) p.id = d.str(f[kId]);
    if (is(d, f[kName], Type::String)) p.name = d.str(f[kName]);
    if (obj) p.text = d.raw(f[kInput]);
  } else if (d.str_is(f[kType], "tool_result")) {
    std::string text;
    TextSlot slot;
    const std::uint32_t content = f[kContent];
    if (content == json::kNone) {
      slot = insert_slot(d, c, "content");
    } else if (is(d, content, Type::String)) {
      slot = string_slot(d, content);
      d.append_str(content, text);
    } else if (is(d, content, Type::Array)) {
      bool marked = false;
      slot = tool_result_blocks(d, content, text, marked);
      breakpoint = breakpoint || marked;
    }
    Part& p = add_part(r, m, PartKind::ToolResult, c, Field::Content, slot);
    p.text = std::move(text);
    if (is(d, f[kToolUseId], Type::String)) p.id = d.str(f[kToolUseId]);
    p.is_error = is(d, f[kIsError], Type::True);
  } else if (d.str_is(f[kType], "thinking") && is(d, f[kThinking], Type::String)) {
    const bool signed_block =
        is(d, f[kSignature], Type::String) && d.node(f[kSignature]).end - d.node(f[kSignature]).begin > 2;
    Part& p =
        add_part(r, m, PartKind::Thinking, c, Field::Content, signed_block ? TextSlot{} : string_slot(d, f[kThinking]));
    p.text = d.str(f[kThinking]);
    if (signed_block) p.signature = d.str(f[kSignature]);
  } else {
    // redacted_thinking, image, document, server_tool_use, search results...
    Part& p = add_part(r, m, PartKind::Opaque, c, Field::Content, {});
    p.opaque_bytes = d.raw(c).size();
  }
  return true;
}

// Parses `value` (system or message content: a string or blocks) into m.
bool parse_content(ParsedRequest& r, Message& m, std::uint32_t value, bool& breakpoint, std::string& err) {
  const auto& d = r.doc;
  if (is(d, value, Type::String)) {
    add_part(r, m, PartKind::Text, json::kNone, Field::Content, string_slot(d, value)).text = d.str(value);
    return true;
  }
  if (!is(d, value, Type::Array)) {
    err = "content is neither a string nor blocks";
    return false;
  }
  for (std::uint32_t c = d.node(value).first; c != json::kNone; c = d.node(c).next)
    if (!parse_block(r, m, c, breakpoint, err)) return false;
  return true;
}

bool parse(ParsedRequest& r, std::string& err) {
  const auto& d = r.doc;
  enum { kModel, kStream, kMessages, kSystem, kTools, kCache };
  std::array<std::uint32_t, 6> f;
  if (!pick(d, d.root(),
            std::array<std::string_view, 6>{"model", "stream", "messages", "system", "tools", "cache_control"}, f)) {
    err = "duplicate top-level member";
    return false;
  }
  if (!is(d, f[kMessages], Type::Array)) {
    err = "no messages array";
    return false;
  }
  if (is(d, f[kModel], Type::String)) r.model = d.str(f[kModel]);
  r.stream = is(d, f[kStream], Type::True);
  r.array = f[kMessages];
  bool system_breakpoint = false;
  if (f[kSystem] != json::kNone && !is(d, f[kSystem], Type::Null)) {
    r.system = f[kSystem];
    Message m;
    m.role = Role::System;
    m.system_field = true;
    m.origin = static_cast<std::uint32_t>(r.messages.size());
    r.messages.push_back(MessageSource{f[kSystem], static_cast<std::uint32_t>(r.parts.size()), 0, true});
    if (!parse_content(r, m, f[kSystem], system_breakpoint, err)) return false;
    r.conversation.messages.push_back(std::move(m));
  }
  int newest_breakpoint = -1;
  int index = 0;
  for (std::uint32_t c = d.node(f[kMessages]).first; c != json::kNone; c = d.node(c).next, ++index) {
    // A message resent from an earlier request: its view, not its parse.
    const ParsedMessageKey key = r.memo ? parsed_message_key(r, c) : ParsedMessageKey{};
    bool breakpoint = false;
    if (r.memo && reuse_parsed_message(r, c, key, &breakpoint)) {
      if (breakpoint) newest_breakpoint = index;
      continue;
    }
    std::array<std::uint32_t, 2> g;
    if (!is(d, c, Type::Object) || !pick(d, c, std::array<std::string_view, 2>{"role", "content"}, g)) {
      err = "malformed message";
      return false;
    }
    Message m;
    if (d.str_is(g[0], "user"))
      m.role = Role::User;
    else if (d.str_is(g[0], "assistant"))
      m.role = Role::Assistant;
    else if (d.str_is(g[0], "system"))
      m.role = Role::System;
    else {
      err = "message role missing or unknown";
      return false;
    }
    m.origin = static_cast<std::uint32_t>(r.messages.size());
    r.messages.push_back(MessageSource{c, static_cast<std::uint32_t>(r.parts.size()), 0, false});
    if (!parse_content(r, m, g[1], breakpoint, err)) return false;
    if (breakpoint) newest_breakpoint = index;
    if (m.role == Role::User && !m.parts.empty()) {
      bool all_results = true;
      for (const Part& p : m.parts) all_results = all_results && p.kind == PartKind::ToolResult;
      if (all_results) m.role = Role::Tool;
    }
    r.conversation.messages.push_back(std::move(m));
    if (r.memo) remember_parsed_message(r, c, key, breakpoint);
  }
  if (has_cache_control(d, f[kCache])) newest_breakpoint = index - 1;  // automatic: the last block
  if (newest_breakpoint >= 0 || system_breakpoint) {
    int i = -1;
    for (Message& m : r.conversation.messages) {
      if (m.system_field) {
        m.cache_protected = true;
        continue;
      }
      if (++i <= newest_breakpoint) m.cache_protected = true;
    }
  }
  std::vector<std::uint32_t> tools;
  if (f[kTools] != json::kNone) tools.push_back(f[kTools]);
  fill_overhead(r, tools);
  return true;
}

// ---- writing --------------------------------------------------------------

struct Piece {
  const Message* m;
  const Part* p;
};

bool fresh_block(const Part& p, std::string& out, std::string& err) {
  switch (p.kind) {
    case PartKind::Text:
      out += "{\"type\":\"text\",\"text\":";
      json::append_json_string(out, p.text);
      out += '}';
      return true;
    case PartKind::ToolCall: {
      json::Document d;
      if (!d.parse(p.text.empty() ? std::string_view("{}") : std::string_view(p.text)) ||
          d.node(d.root()).type != Type::Object) {
        err = "tool_use input is not a JSON object";
        return false;
      }
      out += "{\"type\":\"tool_use\",\"id\":";
      json::append_json_string(out, p.id);
      out += ",\"name\":";
      json::append_json_string(out, p.name);
      out += ",\"input\":";
      out += p.text.empty() ? std::string_view("{}") : std::string_view(p.text);
      out += '}';
      return true;
    }
    case PartKind::ToolResult:
      out += "{\"type\":\"tool_result\",\"tool_use_id\":";
      json::append_json_string(out, p.id);
      out += ",\"content\":";
      json::append_json_string(out, p.text);
      if (p.is_error) out += ",\"is_error\":true";
      out += '}';
      return true;
    case PartKind::Thinking:
      if (p.signature.empty()) break;
      out += "{\"type\":\"thinking\",\"thinking\":";
      json::append_json_string(out, p.text);
      out += ",\"signature\":";
      json::append_json_string(out, p.signature);
      out += '}';
      return true;
    case PartKind::Opaque:
      break;
  }
  err = "cannot render this new part as an Anthropic block";
  return false;
}

// A content value (message content or system) holding `pieces`. `orig` is the
// original value node (string or array), kNone for a new one.
bool content_value(const ParsedRequest& r, std::string_view body, std::uint32_t orig, const std::vector<Piece>& pieces,
                   std::string& out, std::string& err) {
  const bool orig_array = is(r.doc, orig, Type::Array);
  if (!orig_array && pieces.size() <= 1 && (pieces.empty() || pieces[0].p->kind == PartKind::Text)) {
    if (pieces.empty()) {
      out += "\"\"";
      return true;
    }
    const PartSource* src = splice::source_of(r, *pieces[0].m, *pieces[0].p);
    if (src && src->elem == json::kNone && !pieces[0].p->edited && orig != json::kNone &&
        r.messages[pieces[0].m->origin].node == orig) {
      out += r.doc.raw(orig);  // unchanged string content
    } else {
      json::append_json_string(out, pieces[0].p->text);
    }
    return true;
  }
  std::vector<json::Item> items;
  for (const Piece& pc : pieces) {
    json::Item it;
    const PartSource* src = splice::source_of(r, *pc.m, *pc.p);
    if (src && src->elem != json::kNone) {
      if (!splice::element_bytes(r, body, *pc.m, *pc.p, it.bytes, err)) return false;
      if (orig_array && r.messages[pc.m->origin].node == orig) it.pos = child_pos(r.doc, orig, src->elem);
    } else if (!fresh_block(*pc.p, it.bytes, err)) {
      return false;
    }
    items.push_back(std::move(it));
  }
  json::rebuild(r.doc, orig_array ? orig : json::kNone, items, out);
  return true;
}

std::vector<Piece> pieces_of(const Message& m) {
  std::vector<Piece> v;
  for (const Part& p : m.parts) v.push_back({&m, &p});
  return v;
}

bool render_changed(const ParsedRequest& r, std::string_view body, const Message& m, std::string& out,
                    std::string& err) {
  if (splice::same_structure(r, m)) return render_in_place(r, body, m, out, err);
  const auto& d = r.doc;
  const std::uint32_t obj = r.messages[m.origin].node;
  const std::uint32_t content = d.find(obj, "content");
  json::Edit e{d.node(content).begin, d.node(content).end, {}};
  if (!content_value(r, body, content, pieces_of(m), e.text, err)) return false;
  json::append_with_edits(out, body, d.node(obj).begin, d.node(obj).end, {e});
  return true;
}

bool render_new(const ParsedRequest& r, const Message& m, std::string& out, std::string& err) {
  out += m.role == Role::Assistant ? "{\"role\":\"assistant\",\"content\":"
         : m.role == Role::System  ? "{\"role\":\"system\",\"content\":"
                                   : "{\"role\":\"user\",\"content\":";
  if (!content_value(r, {}, json::kNone, pieces_of(m), out, err)) return false;
  out += '}';
  return true;
}

bool render_system(const ParsedRequest& r, std::string_view body, const std::vector<const Message*>& system,
                   std::string& out, std::string& err) {
  std::vector<Piece> pieces;
  for (const Message* m : system)
    for (const Part& p : m->parts) pieces.push_back({m, &p});
  const std::uint32_t orig =
      system.size() == 1 && system[0]->origin != pruning::kNewOrigin ? r.messages[system[0]->origin].node : json::kNone;
  return content_value(r, body, orig, pieces, out, err);
}

}  // namespace

const FormatOps kAnthropicOps{parse, render_changed, render_new, render_system, "system", "messages"};

// How many breakpoints tokendiet may add of its own (the cache anchors,
// pruning::Part::cache_anchor): none for a client that does not cache (no
// `cache_control`: adding one would start billing cache writes it never
// asked for) or that sets a `ttl` (a 5-minute mark before a client's 1-hour
// one is rejected), else what is left of Anthropic's four. The key is
// counted in the body's bytes: inside a string it is written
// \"cache_control\" and does not match; a value that happens to equal it
// only makes the count larger, so fewer anchors are added.
std::uint32_t anthropic_cache_anchors_free(std::string_view body) {
  constexpr std::string_view kKey = "\"cache_control\"";
  std::uint32_t count = 0;
  for (std::size_t at = body.find(kKey); at != std::string_view::npos; at = body.find(kKey, at + kKey.size())) ++count;
  if (count < 1 || count > 3 || body.find("\"ttl\"") != std::string_view::npos) return 0;
  return 4 - count;
}

bool anthropic_cache_anchor_edit(const ParsedRequest& r, const Message& m, const Part& p, json::Edit& out) {
  const PartSource* src = splice::source_of(r, m, p);
  if (!src || src->elem == json::kNone || r.doc.node(src->elem).type != Type::Object) return false;
  if (r.doc.raw(src->elem).find("\"cache_control\"") != std::string_view::npos) return false;  // marked already
  const std::uint32_t close = r.doc.node(src->elem).end - 1;                                   // the block's '}'
  out = json::Edit{close, close, ",\"cache_control\":{\"type\":\"ephemeral\"}", {}};
  return true;
}

}  // namespace td::providers::detail
