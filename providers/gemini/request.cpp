// Gemini generateContent / streamGenerateContent (v1beta, v1, Vertex).
//
// contents[]: role user|model (absent: user), parts: text (Text, or Thinking
// with thought:true), functionCall (ToolCall, text = the args object's JSON,
// id = its id or, on older models, its name: Gemini pairs calls and responses
// by name), functionResponse (ToolResult; a response object with one string
// member is edited in that string, any other is replaced by {"output": text}
// as the API documents), inlineData / fileData / code parts (Opaque).
// thoughtSignature sits beside the part it signs; it is kept in
// Part::signature and the part is not editable (the signature would no longer
// match). A content made only of functionResponse parts gets Role::Tool.
// systemInstruction is one system_field message; tools are fixed overhead;
// generationConfig and everything else is never touched. The model and the
// stream flag are in the URL, not the body (see route.hpp).
#include <string>

#include "providers/formats.hpp"
#include "providers/parsed_message_memo.hpp"
#include "providers/part_splice.hpp"

namespace td::providers::detail {
namespace {

using json::Type;
using pruning::PartKind;
using pruning::Role;

enum { kText, kThought, kSig, kSigSnake, kCall, kCallSnake, kResp, kRespSnake, kN };
constexpr std::array<std::string_view, kN> kPartKeys{
    "text",         "thought",       "thoughtSignature", "thought_signature",
    "functionCall", "function_call", "functionResponse", "function_response"};

bool parse_part(ParsedRequest& r, Message& m, std::uint32_t c, std::string& err) {
  const auto& d = r.doc;
  std::array<std::uint32_t, kN> f;
  if (!is(d, c, Type::Object) || !pick(d, c, kPartKeys, f)) {
    err = "malformed part";
    return false;
  }
  const std::uint32_t sig = is(d, f[kSig], Type::String)        ? f[kSig]
                            : is(d, f[kSigSnake], Type::String) ? f[kSigSnake]
                                                                : json::kNone;
  const bool is_signed = sig != json::kNone;
  const std::uint32_t call = f[kCall] != json::kNone ? f[kCall] : f[kCallSnake];
  const std::uint32_t resp = f[kResp] != json::kNone ? f[kResp] : f[kRespSnake];
  Part* p = nullptr;
  if (is(d, call, Type::Object)) {
    std::array<std::uint32_t, 3> g;
    if (!pick(d, call, std::array<std::string_view, 3>{"name", "args", "id"}, g)) {
      err = "malformed functionCall";
      return false;
    }
    const bool obj = is(d, g[1], Type::Object);
    TextSlot slot =
        obj && !is_signed ? TextSlot{TextSlot::Kind::JsonObject, d.node(g[1]).begin, d.node(g[1]).end} : TextSlot{};
    p = &add_part(r, m, PartKind::ToolCall, c, Field::Content, slot);
    if (is(d, g[0], Type::String)) p->name = d.str(g[0]);
    p->id = is(d, g[2], Type::String) ? d.str(g[2]) : p->name;
    p->text = obj ? std::string(d.raw(g[1])) : std::string("{}");
  } else if (is(d, resp, Type::Object)) {
    std::array<std::uint32_t, 3> g;
    if (!pick(d, resp, std::array<std::string_view, 3>{"name", "response", "id"}, g)) {
      err = "malformed functionResponse";
      return false;
    }
    TextSlot slot;
    std::string text;
    if (is(d, g[1], Type::Object)) {
      const json::Node& rn = d.node(g[1]);
      if (rn.count == 1 && is(d, rn.first, Type::String)) {
        slot = string_slot(d, rn.first);
        d.append_str(rn.first, text);
      } else {
        slot = TextSlot{TextSlot::Kind::WrapOutput, rn.begin, rn.end};
        text = d.raw(g[1]);
      }
    }
    p = &add_part(r, m, PartKind::ToolResult, c, Field::Content, slot);
    p->text = std::move(text);
    if (is(d, g[0], Type::String)) p->name = d.str(g[0]);
    p->id = is(d, g[2], Type::String) ? d.str(g[2]) : p->name;
  } else if (is(d, f[kText], Type::String)) {
    const PartKind kind = is(d, f[kThought], Type::True) ? PartKind::Thinking : PartKind::Text;
    p = &add_part(r, m, kind, c, Field::Content, is_signed ? TextSlot{} : string_slot(d, f[kText]));
    p->text = d.str(f[kText]);
  } else {
    p = &add_part(r, m, PartKind::Opaque, c, Field::Content, {});
    p->opaque_bytes = d.raw(c).size();
  }
  if (is_signed) p->signature = d.str(sig);
  return true;
}

// A Content object {role?, parts: [...]}.
bool parse_content(ParsedRequest& r, std::uint32_t c, bool system_field, std::string& err) {
  const auto& d = r.doc;
  std::array<std::uint32_t, 2> g;
  if (!is(d, c, Type::Object) || !pick(d, c, std::array<std::string_view, 2>{"role", "parts"}, g) ||
      !is(d, g[1], Type::Array)) {
    err = "malformed content";
    return false;
  }
  Message m;
  m.system_field = system_field;
  if (system_field)
    m.role = Role::System;
  else if (g[0] == json::kNone || d.str_is(g[0], "user"))
    m.role = Role::User;
  else if (d.str_is(g[0], "model"))
    m.role = Role::Assistant;
  else if (d.str_is(g[0], "function") || d.str_is(g[0], "tool"))
    m.role = Role::Tool;
  else {
    err = "unknown content role";
    return false;
  }
  m.origin = static_cast<std::uint32_t>(r.messages.size());
  r.messages.push_back(MessageSource{c, static_cast<std::uint32_t>(r.parts.size()), 0, system_field});
  for (std::uint32_t p = d.node(g[1]).first; p != json::kNone; p = d.node(p).next)
    if (!parse_part(r, m, p, err)) return false;
  if (m.role == Role::User && !m.parts.empty()) {
    bool all_results = true;
    for (const Part& p : m.parts) all_results = all_results && p.kind == PartKind::ToolResult;
    if (all_results) m.role = Role::Tool;
  }
  r.conversation.messages.push_back(std::move(m));
  return true;
}

bool parse(ParsedRequest& r, std::string& err) {
  const auto& d = r.doc;
  std::array<std::uint32_t, 4> f;
  if (!pick(d, d.root(),
            std::array<std::string_view, 4>{"contents", "systemInstruction", "system_instruction", "tools"}, f)) {
    err = "duplicate top-level member";
    return false;
  }
  if (!is(d, f[0], Type::Array)) {
    err = "no contents array";
    return false;
  }
  if (f[1] != json::kNone && f[2] != json::kNone) {
    err = "both systemInstruction and system_instruction";
    return false;
  }
  const std::uint32_t system = f[1] != json::kNone ? f[1] : f[2];
  if (system != json::kNone && !is(d, system, Type::Null)) {
    r.system = system;
    if (!parse_content(r, system, true, err)) return false;
  }
  r.array = f[0];
  for (std::uint32_t c = d.node(f[0]).first; c != json::kNone; c = d.node(c).next) {
    // A content resent from an earlier request: its view, not its parse.
    const ParsedMessageKey key = r.memo ? parsed_message_key(r, c) : ParsedMessageKey{};
    if (r.memo && reuse_parsed_message(r, c, key)) continue;
    if (!parse_content(r, c, false, err)) return false;
    if (r.memo) remember_parsed_message(r, c, key);
  }
  std::vector<std::uint32_t> tools;
  if (f[3] != json::kNone) tools.push_back(f[3]);
  fill_overhead(r, tools);
  return true;
}

// ---- writing --------------------------------------------------------------

struct Piece {
  const Message* m;
  const Part* p;
};

void append_signature(std::string& out, const Part& p) {
  if (p.signature.empty()) return;
  out += ",\"thoughtSignature\":";
  json::append_json_string(out, p.signature);
}

void append_id(std::string& out, const Part& p) {
  if (p.id.empty() || p.id == p.name) return;
  out += ",\"id\":";
  json::append_json_string(out, p.id);
}

bool fresh_part(const Part& p, std::string& out, std::string& err) {
  switch (p.kind) {
    case PartKind::Text:
    case PartKind::Thinking:
      out += "{\"text\":";
      json::append_json_string(out, p.text);
      if (p.kind == PartKind::Thinking) out += ",\"thought\":true";
      append_signature(out, p);
      out += '}';
      return true;
    case PartKind::ToolCall: {
      json::Document d;
      std::string_view args = p.text.empty() ? std::string_view("{}") : std::string_view(p.text);
      if (!d.parse(args) || d.node(d.root()).type != Type::Object) {
        err = "functionCall args are not a JSON object";
        return false;
      }
      out += "{\"functionCall\":{\"name\":";
      json::append_json_string(out, p.name);
      out += ",\"args\":";
      out += args;
      append_id(out, p);
      out += '}';
      append_signature(out, p);
      out += '}';
      return true;
    }
    case PartKind::ToolResult:
      out += "{\"functionResponse\":{\"name\":";
      json::append_json_string(out, p.name);
      out += ",\"response\":{\"output\":";
      json::append_json_string(out, p.text);
      out += '}';
      append_id(out, p);
      out += "}}";
      return true;
    case PartKind::Opaque:
      break;
  }
  err = "cannot render a new opaque Gemini part";
  return false;
}

// The value of a `parts` array holding `pieces`; `orig` is the original parts node or kNone.
bool parts_value(const ParsedRequest& r, std::string_view body, std::uint32_t orig, const std::vector<Piece>& pieces,
                 std::string& out, std::string& err) {
  std::vector<json::Item> items;
  for (const Piece& pc : pieces) {
    json::Item it;
    const PartSource* src = splice::source_of(r, *pc.m, *pc.p);
    if (src && src->elem != json::kNone) {
      if (!splice::element_bytes(r, body, *pc.m, *pc.p, it.bytes, err)) return false;
      if (orig != json::kNone) it.pos = child_pos(r.doc, orig, src->elem);
    } else if (!fresh_part(*pc.p, it.bytes, err)) {
      return false;
    }
    items.push_back(std::move(it));
  }
  json::rebuild(r.doc, orig, items, out);
  return true;
}

// Original content object `obj` with its parts array replaced.
bool with_parts(const ParsedRequest& r, std::string_view body, std::uint32_t obj, const std::vector<Piece>& pieces,
                std::string& out, std::string& err) {
  const std::uint32_t parts = r.doc.find(obj, "parts");
  json::Edit e{r.doc.node(parts).begin, r.doc.node(parts).end, {}};
  if (!parts_value(r, body, parts, pieces, e.text, err)) return false;
  json::append_with_edits(out, body, r.doc.node(obj).begin, r.doc.node(obj).end, {e});
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
  return with_parts(r, body, r.messages[m.origin].node, pieces_of(m), out, err);
}

bool render_new(const ParsedRequest& r, const Message& m, std::string& out, std::string& err) {
  out += m.role == Role::Assistant ? "{\"role\":\"model\",\"parts\":" : "{\"role\":\"user\",\"parts\":";
  if (!parts_value(r, {}, json::kNone, pieces_of(m), out, err)) return false;
  out += '}';
  return true;
}

bool render_system(const ParsedRequest& r, std::string_view body, const std::vector<const Message*>& system,
                   std::string& out, std::string& err) {
  std::vector<Piece> pieces;
  for (const Message* m : system)
    for (const Part& p : m->parts) pieces.push_back({m, &p});
  if (r.system != json::kNone) return with_parts(r, body, r.system, pieces, out, err);
  out += "{\"parts\":";
  if (!parts_value(r, body, json::kNone, pieces, out, err)) return false;
  out += '}';
  return true;
}

}  // namespace

const FormatOps kGeminiOps{parse, render_changed, render_new, render_system, "systemInstruction", "contents"};

}  // namespace td::providers::detail
