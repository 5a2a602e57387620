// OpenAI Responses (/v1/responses).
//
// input: a string (one user message) or items, each one Message: message
// items (type "message" or just a role; content a string or input_text /
// output_text parts, other parts Opaque), function_call / custom_tool_call
// (ToolCall, id = call_id), function_call_output / custom_tool_call_output
// (ToolResult), reasoning (Thinking, text = its summaries, signature =
// encrypted_content; not editable: it is bound to its id), anything else
// (item_reference, server-side tool calls...) Opaque. instructions is the
// system_field message. With previous_response_id most of the conversation
// lives on the server, out of our sight, and a client will not resend what
// a cut hid, so the diet cuts nothing of such a request (server_history).
#include <string>

#include "providers/formats.hpp"
#include "providers/parsed_message_memo.hpp"
#include "providers/part_splice.hpp"

namespace td::providers::detail {
namespace {

using json::Type;
using pruning::PartKind;
using pruning::Role;

enum { kType, kRole, kContent, kCallId, kName, kArguments, kOutput, kSummary, kEncrypted, kInput, kN };
constexpr std::array<std::string_view, kN> kItemKeys{"type",      "role",   "content", "call_id",           "name",
                                                     "arguments", "output", "summary", "encrypted_content", "input"};

Message& begin_message(ParsedRequest& r, std::uint32_t node, Role role, bool system_field = false) {
  Message m;
  m.role = role;
  m.system_field = system_field;
  m.origin = static_cast<std::uint32_t>(r.messages.size());
  r.messages.push_back(MessageSource{node, static_cast<std::uint32_t>(r.parts.size()), 0, system_field});
  return r.conversation.messages.emplace_back(std::move(m));
}

bool text_type(const json::Document& d, std::uint32_t t) {
  return d.str_is(t, "input_text") || d.str_is(t, "output_text") || d.str_is(t, "text");
}

bool parse_message_item(ParsedRequest& r, std::uint32_t item, const std::array<std::uint32_t, kN>& f,
                        std::string& err) {
  const auto& d = r.doc;
  Role role;
  if (d.str_is(f[kRole], "user"))
    role = Role::User;
  else if (d.str_is(f[kRole], "assistant"))
    role = Role::Assistant;
  else if (d.str_is(f[kRole], "system") || d.str_is(f[kRole], "developer"))
    role = Role::System;
  else {
    err = "message item role missing or unknown";
    return false;
  }
  Message& m = begin_message(r, item, role);
  const std::uint32_t content = f[kContent];
  if (is(d, content, Type::String)) {
    add_part(r, m, PartKind::Text, json::kNone, Field::Content, string_slot(d, content)).text = d.str(content);
    return true;
  }
  if (!is(d, content, Type::Array)) {
    err = "message item content is neither a string nor parts";
    return false;
  }
  for (std::uint32_t c = d.node(content).first; c != json::kNone; c = d.node(c).next) {
    std::array<std::uint32_t, 2> g;
    if (!is(d, c, Type::Object) || !pick(d, c, std::array<std::string_view, 2>{"type", "text"}, g)) {
      err = "malformed content part";
      return false;
    }
    if (text_type(d, g[0]) && is(d, g[1], Type::String)) {
      add_part(r, m, PartKind::Text, c, Field::Content, string_slot(d, g[1])).text = d.str(g[1]);
    } else {
      add_part(r, m, PartKind::Opaque, c, Field::Content, {}).opaque_bytes = d.raw(c).size();
    }
  }
  return true;
}

bool parse_item(ParsedRequest& r, std::uint32_t item, std::string& err) {
  const auto& d = r.doc;
  std::array<std::uint32_t, kN> f;
  if (!is(d, item, Type::Object) || !pick(d, item, kItemKeys, f)) {
    err = "malformed input item";
    return false;
  }
  if (d.str_is(f[kType], "message") || (f[kType] == json::kNone && f[kRole] != json::kNone))
    return parse_message_item(r, item, f, err);
  if (!is(d, f[kType], Type::String)) {
    err = "input item without a type";
    return false;
  }
  const bool call = d.str_is(f[kType], "function_call") || d.str_is(f[kType], "custom_tool_call");
  const bool output = d.str_is(f[kType], "function_call_output") || d.str_is(f[kType], "custom_tool_call_output");
  if (call) {
    const std::uint32_t args = d.str_is(f[kType], "function_call") ? f[kArguments] : f[kInput];
    Message& m = begin_message(r, item, Role::Assistant);
    Part& p = add_part(r, m, PartKind::ToolCall, item, Field::Item,
                       is(d, args, Type::String) ? string_slot(d, args) : TextSlot{});
    if (is(d, f[kCallId], Type::String)) p.id = d.str(f[kCallId]);
    if (is(d, f[kName], Type::String)) p.name = d.str(f[kName]);
    if (is(d, args, Type::String)) p.text = d.str(args);
  } else if (output) {
    Message& m = begin_message(r, item, Role::Tool);
    TextSlot slot;
    std::string text;
    if (is(d, f[kOutput], Type::String)) {
      slot = string_slot(d, f[kOutput]);
      d.append_str(f[kOutput], text);
    } else if (is(d, f[kOutput], Type::Array)) {
      bool all_text = true;
      for (std::uint32_t c = d.node(f[kOutput]).first; c != json::kNone; c = d.node(c).next) {
        std::array<std::uint32_t, 2> g;
        if (is(d, c, Type::Object) && pick(d, c, std::array<std::string_view, 2>{"type", "text"}, g) &&
            text_type(d, g[0]) && is(d, g[1], Type::String)) {
          if (!text.empty()) text += '\n';
          d.append_str(g[1], text);
        } else {
          all_text = false;
        }
      }
      if (all_text) slot = string_slot(d, f[kOutput]);
    }
    Part& p = add_part(r, m, PartKind::ToolResult, item, Field::Item, slot);
    p.text = std::move(text);
    if (is(d, f[kCallId], Type::String)) p.id = d.str(f[kCallId]);
  } else if (d.str_is(f[kType], "reasoning")) {
    Message& m = begin_message(r, item, Role::Assistant);
    Part& p = add_part(r, m, PartKind::Thinking, item, Field::Item, {});
    if (is(d, f[kSummary], Type::Array)) {
      std::string summary;
      for (std::uint32_t c = d.node(f[kSummary]).first; c != json::kNone; c = d.node(c).next) {
        std::uint32_t t = d.find(c, "text");
        if (!is(d, t, Type::String)) continue;
        if (!summary.empty()) summary += '\n';
        d.append_str(t, summary);
      }
      p.text = std::move(summary);
    }
    if (is(d, f[kEncrypted], Type::String)) p.signature = d.str(f[kEncrypted]);
  } else {
    std::string_view type = d.raw(f[kType]);
    const bool is_output = type.size() > 9 && type.substr(type.size() - 8) == "_output\"";
    Message& m = begin_message(r, item, is_output ? Role::Tool : Role::Assistant);
    add_part(r, m, PartKind::Opaque, item, Field::Item, {}).opaque_bytes = d.raw(item).size();
  }
  return true;
}

bool parse(ParsedRequest& r, std::string& err) {
  const auto& d = r.doc;
  enum { kModel, kStream, kInputTop, kInstructions, kTools, kPrevious };
  std::array<std::uint32_t, 6> f;
  if (!pick(
          d, d.root(),
          std::array<std::string_view, 6>{"model", "stream", "input", "instructions", "tools", "previous_response_id"},
          f)) {
    err = "duplicate top-level member";
    return false;
  }
  const std::uint32_t input = f[kInputTop];
  if (!is(d, input, Type::Array) && !is(d, input, Type::String)) {
    err = "no input";
    return false;
  }
  if (is(d, f[kModel], Type::String)) r.model = d.str(f[kModel]);
  r.stream = is(d, f[kStream], Type::True);
  r.server_history = is(d, f[kPrevious], Type::String);
  if (is(d, f[kInstructions], Type::String)) {
    r.system = f[kInstructions];
    Message& m = begin_message(r, f[kInstructions], Role::System, true);
    add_part(r, m, PartKind::Text, json::kNone, Field::Content, string_slot(d, f[kInstructions])).text =
        d.str(f[kInstructions]);
  } else if (f[kInstructions] != json::kNone && !is(d, f[kInstructions], Type::Null)) {
    err = "instructions is not a string";
    return false;
  }
  r.array = input;
  if (is(d, input, Type::String)) {
    Message& m = begin_message(r, input, Role::User);
    add_part(r, m, PartKind::Text, json::kNone, Field::Content, string_slot(d, input)).text = d.str(input);
  } else {
    for (std::uint32_t c = d.node(input).first; c != json::kNone; c = d.node(c).next) {
      // An item resent from an earlier request: its view, not its parse.
      const ParsedMessageKey key = r.memo ? parsed_message_key(r, c) : ParsedMessageKey{};
      if (r.memo && reuse_parsed_message(r, c, key)) continue;
      const std::size_t messages_before = r.messages.size();
      if (!parse_item(r, c, err)) return false;
      // An item that became no message (or more than one) is parsed every time.
      if (r.memo && r.messages.size() == messages_before + 1) remember_parsed_message(r, c, key);
    }
  }
  std::vector<std::uint32_t> tools;
  if (f[kTools] != json::kNone) tools.push_back(f[kTools]);
  fill_overhead(r, tools);
  return true;
}

// ---- writing --------------------------------------------------------------

const char* role_name(Role role) {
  switch (role) {
    case Role::System:
      return "system";
    case Role::Assistant:
      return "assistant";
    default:
      return "user";
  }
}

void append_text_part(std::string& out, Role role, std::string_view text) {
  out += role == Role::Assistant ? "{\"type\":\"output_text\",\"text\":" : "{\"type\":\"input_text\",\"text\":";
  json::append_json_string(out, text);
  out += '}';
}

// The content value of a message item holding `parts` (Text / Opaque).
bool content_value(const ParsedRequest& r, std::string_view body, const Message& m, std::uint32_t orig,
                   const std::vector<const Part*>& parts, std::string& out, std::string& err) {
  const bool orig_array = is(r.doc, orig, Type::Array);
  if (!orig_array && parts.size() == 1 && parts[0]->kind == PartKind::Text) {
    const PartSource* src = splice::source_of(r, m, *parts[0]);
    if (src && src->elem == json::kNone && !parts[0]->edited && orig != json::kNone && is(r.doc, orig, Type::String)) {
      out += r.doc.raw(orig);
    } else {
      json::append_json_string(out, parts[0]->text);
    }
    return true;
  }
  std::vector<json::Item> items;
  for (const Part* p : parts) {
    json::Item it;
    const PartSource* src = splice::source_of(r, m, *p);
    if (src && src->elem != json::kNone) {
      if (!splice::element_bytes(r, body, m, *p, it.bytes, err)) return false;
      if (orig_array) it.pos = child_pos(r.doc, orig, src->elem);
    } else if (p->kind == PartKind::Text) {
      append_text_part(it.bytes, m.role, p->text);
    } else {
      err = "cannot render this part in a message item";
      return false;
    }
    items.push_back(std::move(it));
  }
  json::rebuild(r.doc, orig_array ? orig : json::kNone, items, out);
  return true;
}

// The message item for `parts`: the original item with its content replaced
// when there is one, a new {"role", "content"} item otherwise.
bool message_item(const ParsedRequest& r, std::string_view body, const Message& m,
                  const std::vector<const Part*>& parts, std::string& out, std::string& err) {
  const std::uint32_t node = m.origin == pruning::kNewOrigin ? json::kNone : r.messages[m.origin].node;
  const std::uint32_t content = is(r.doc, node, Type::Object) ? r.doc.find(node, "content") : json::kNone;
  if (content != json::kNone) {
    json::Edit e{r.doc.node(content).begin, r.doc.node(content).end, {}};
    if (!content_value(r, body, m, content, parts, e.text, err)) return false;
    json::append_with_edits(out, body, r.doc.node(node).begin, r.doc.node(node).end, {e});
    return true;
  }
  out += "{\"role\":\"";
  out += role_name(m.role);
  out += "\",\"content\":";
  return content_value(r, body, m, is(r.doc, node, Type::String) ? node : json::kNone, parts, out, err) &&
         (out += '}', true);
}

// All items of message m, comma-separated.
bool render_items(const ParsedRequest& r, std::string_view body, const Message& m, std::string& out, std::string& err) {
  std::vector<const Part*> content;
  for (const Part& p : m.parts) {
    const PartSource* src = splice::source_of(r, m, p);
    if ((src && src->field == Field::Content) || (!src && p.kind == PartKind::Text)) content.push_back(&p);
  }
  bool content_done = false;
  std::string buf;
  for (const Part& p : m.parts) {
    const PartSource* src = splice::source_of(r, m, p);
    buf.clear();
    if ((src && src->field == Field::Content) || (!src && p.kind == PartKind::Text)) {
      if (content_done) continue;
      content_done = true;
      if (!message_item(r, body, m, content, buf, err)) return false;
    } else if (src) {
      if (!splice::element_bytes(r, body, m, p, buf, err)) return false;
    } else if (p.kind == PartKind::ToolCall) {
      buf += "{\"type\":\"function_call\",\"call_id\":";
      json::append_json_string(buf, p.id);
      buf += ",\"name\":";
      json::append_json_string(buf, p.name);
      buf += ",\"arguments\":";
      json::append_json_string(buf, p.text);
      buf += '}';
    } else if (p.kind == PartKind::ToolResult) {
      buf += "{\"type\":\"function_call_output\",\"call_id\":";
      json::append_json_string(buf, p.id);
      buf += ",\"output\":";
      json::append_json_string(buf, p.text);
      buf += '}';
    } else {
      err = "cannot render this new part as a Responses item";
      return false;
    }
    if (!out.empty()) out += ',';
    out += buf;
  }
  return true;
}

bool render_changed(const ParsedRequest& r, std::string_view body, const Message& m, std::string& out,
                    std::string& err) {
  // A bare `input` string has no item to edit in place once it sits in an array.
  if (splice::same_structure(r, m) && !is(r.doc, r.messages[m.origin].node, Type::String))
    return render_in_place(r, body, m, out, err);
  std::string items;
  if (!render_items(r, body, m, items, err)) return false;
  out += items;
  return true;
}

bool render_new(const ParsedRequest& r, const Message& m, std::string& out, std::string& err) {
  std::string items;
  if (!render_items(r, {}, m, items, err)) return false;
  out += items;
  return true;
}

bool render_system(const ParsedRequest& r, std::string_view, const std::vector<const Message*>& system,
                   std::string& out, std::string& err) {
  std::string joined;
  for (const Message* m : system)
    for (const Part& p : m->parts) {
      if (p.kind != PartKind::Text) {
        err = "instructions hold text only";
        return false;
      }
      if (!joined.empty()) joined += "\n\n";
      joined += p.text;
    }
  json::append_json_string(out, joined);
  return true;
}

}  // namespace

const FormatOps kOpenAIResponsesOps{parse, render_changed, render_new, render_system, "instructions", "input"};

}  // namespace td::providers::detail
