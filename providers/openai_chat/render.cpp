// OpenAI chat completions: writing a changed or new message back in the
// format (docs/design.md §Splicing); parsing is request.cpp's.
#include <string>

#include "providers/formats.hpp"
#include "providers/openai_chat/openai_chat.hpp"
#include "providers/part_splice.hpp"

namespace td::providers::detail {
namespace openai_chat {
namespace {

using json::Type;
using pruning::PartKind;
using pruning::Role;

void append_text_part(std::string& out, std::string_view text) {
  out += "{\"type\":\"text\",\"text\":";
  json::append_json_string(out, text);
  out += '}';
}

void append_tool_call(std::string& out, const Part& p) {
  out += "{\"id\":";
  json::append_json_string(out, p.id);
  out += ",\"type\":\"function\",\"function\":{\"name\":";
  json::append_json_string(out, p.name);
  out += ",\"arguments\":";
  json::append_json_string(out, p.text);
  out += "}}";
}

// The original value a bare part came from (content string, reasoning string).
std::string_view slot_bytes(std::string_view body, const PartSource& s) {
  return body.substr(s.slot.begin, s.slot.end - s.slot.begin);
}

// A single string-valued part: its original bytes if untouched, else re-rendered.
void append_string_value(std::string& out, std::string_view body, const PartSource* src, const Part& p) {
  if (src && !p.edited && src->slot.kind == TextSlot::Kind::String) {
    out += slot_bytes(body, *src);
  } else {
    json::append_json_string(out, p.text);
  }
}

bool content_value(const ParsedRequest& r, std::string_view body, const Message& m, std::uint32_t content_node,
                   const std::vector<const Part*>& parts, std::string& out, std::string& err) {
  if (m.role == Role::Tool) {
    if (parts.size() != 1 || parts[0]->kind != PartKind::ToolResult) {
      err = "a tool message holds exactly one result";
      return false;
    }
    const PartSource* src = splice::source_of(r, m, *parts[0]);
    if (src && src->slot.kind != TextSlot::Kind::String && !parts[0]->edited) {
      out += content_node != json::kNone ? r.doc.raw(content_node) : std::string_view("\"\"");
      return true;
    }
    append_string_value(out, body, src, *parts[0]);
    return true;
  }
  if (parts.empty()) {
    out += m.role == Role::Assistant ? "null" : "\"\"";
    return true;
  }
  if (parts.size() == 1 && parts[0]->kind == PartKind::Text) {
    const PartSource* src = splice::source_of(r, m, *parts[0]);
    if (!src || src->elem == json::kNone) {
      append_string_value(out, body, src, *parts[0]);
      return true;
    }
  }
  std::vector<json::Item> items;
  for (const Part* p : parts) {
    json::Item it;
    const PartSource* src = splice::source_of(r, m, *p);
    if (src && src->elem != json::kNone) {
      if (!splice::element_bytes(r, body, m, *p, it.bytes, err)) return false;
      if (is(r.doc, content_node, json::Type::Array)) it.pos = child_pos(r.doc, content_node, src->elem);
    } else if (p->kind == PartKind::Text) {
      append_text_part(it.bytes, p->text);
    } else {
      err = "cannot render this part in a content array";
      return false;
    }
    items.push_back(std::move(it));
  }
  json::rebuild(r.doc, is(r.doc, content_node, json::Type::Array) ? content_node : json::kNone, items, out);
  return true;
}

bool tool_calls_value(const ParsedRequest& r, std::string_view body, const Message& m, std::uint32_t calls_node,
                      const std::vector<const Part*>& calls, std::string& out, std::string& err) {
  std::vector<json::Item> items;
  for (const Part* p : calls) {
    json::Item it;
    const PartSource* src = splice::source_of(r, m, *p);
    if (src && src->elem != json::kNone) {
      if (!splice::element_bytes(r, body, m, *p, it.bytes, err)) return false;
      if (calls_node != json::kNone) it.pos = child_pos(r.doc, calls_node, src->elem);
    } else if (p->kind == PartKind::ToolCall) {
      append_tool_call(it.bytes, *p);
    } else {
      err = "cannot render this tool call";
      return false;
    }
    items.push_back(std::move(it));
  }
  json::rebuild(r.doc, is(r.doc, calls_node, json::Type::Array) ? calls_node : json::kNone, items, out);
  return true;
}

void thinking_value(std::string_view body, const ParsedRequest& r, const Message& m,
                    const std::vector<const Part*>& parts, std::string& out) {
  if (parts.size() == 1) {
    append_string_value(out, body, splice::source_of(r, m, *parts[0]), *parts[0]);
    return;
  }
  std::string joined;
  for (const Part* p : parts) joined += p->text;
  json::append_json_string(out, joined);
}

struct Groups {
  std::vector<const Part*> reasoning_content, reasoning, content, calls;
  const Part* function_call = nullptr;
};

Groups group(const ParsedRequest& r, const Message& m) {
  Groups g;
  for (const Part& p : m.parts) {
    const PartSource* src = splice::source_of(r, m, p);
    const Field field = src ? src->field : Field::Content;
    switch (p.kind) {
      case PartKind::Thinking:
        (field == Field::Reasoning ? g.reasoning : g.reasoning_content).push_back(&p);
        break;
      case PartKind::ToolCall:
        if (field == Field::FunctionCall)
          g.function_call = &p;
        else
          g.calls.push_back(&p);
        break;
      case PartKind::Opaque:
        (field == Field::ToolCalls ? g.calls : g.content).push_back(&p);
        break;
      default:
        g.content.push_back(&p);
    }
  }
  return g;
}

const char* role_name(Role role) {
  switch (role) {
    case Role::System:
      return "system";
    case Role::User:
      return "user";
    case Role::Assistant:
      return "assistant";
    case Role::Tool:
      return "tool";
  }
  return "user";
}

}  // namespace

bool render_changed(const ParsedRequest& r, std::string_view body, const Message& m, std::string& out,
                    std::string& err) {
  if (splice::same_structure(r, m)) return render_in_place(r, body, m, out, err);
  const auto& d = r.doc;
  const std::uint32_t obj = r.messages[m.origin].node;
  const Groups g = group(r, m);
  std::vector<json::Item> items;
  bool have_content = false, have_calls = false, have_rc = false;
  int pos = 0;
  for (std::uint32_t c = d.node(obj).first; c != json::kNone; c = d.node(c).next, ++pos) {
    json::Item it;
    it.pos = pos;
    auto head = [&] { it.bytes = json::member_head(d, c); };
    if (d.key_is(c, "content")) {
      have_content = true;
      head();
      if (!content_value(r, body, m, c, g.content, it.bytes, err)) return false;
    } else if (d.key_is(c, "tool_calls")) {
      have_calls = true;
      if (!g.calls.empty()) {
        head();
        if (!tool_calls_value(r, body, m, c, g.calls, it.bytes, err)) return false;
      }
    } else if (d.key_is(c, "function_call")) {
      if (g.function_call) {
        head();
        if (!splice::element_bytes(r, body, m, *g.function_call, it.bytes, err)) return false;
      }
    } else if (d.key_is(c, "reasoning_content")) {
      have_rc = true;
      if (!g.reasoning_content.empty()) {
        head();
        thinking_value(body, r, m, g.reasoning_content, it.bytes);
      }
    } else if (d.key_is(c, "reasoning") && is(d, c, Type::String)) {
      if (!g.reasoning.empty()) {
        head();
        thinking_value(body, r, m, g.reasoning, it.bytes);
      }
    } else {
      it.bytes = d.raw_member(c);
    }
    items.push_back(std::move(it));
  }
  if (!have_rc && !g.reasoning_content.empty()) {
    json::Item it{-1, "\"reasoning_content\":"};
    thinking_value(body, r, m, g.reasoning_content, it.bytes);
    items.push_back(std::move(it));
  }
  if (!have_content && (!g.content.empty() || m.role == Role::Tool)) {
    json::Item it{-1, "\"content\":"};
    if (!content_value(r, body, m, json::kNone, g.content, it.bytes, err)) return false;
    items.push_back(std::move(it));
  }
  if (!have_calls && !g.calls.empty()) {
    json::Item it{-1, "\"tool_calls\":"};
    if (!tool_calls_value(r, body, m, json::kNone, g.calls, it.bytes, err)) return false;
    items.push_back(std::move(it));
  }
  json::rebuild(d, obj, items, out);
  return true;
}

bool render_new(const ParsedRequest& r, const Message& m, std::string& out, std::string& err) {
  if (m.role == Role::Tool) {
    // One tool message per result.
    bool first = true;
    for (const Part& p : m.parts) {
      if (p.kind != PartKind::ToolResult) {
        err = "a new tool message may hold only tool results";
        return false;
      }
      if (!first) out += ',';
      first = false;
      out += "{\"role\":\"tool\",\"tool_call_id\":";
      json::append_json_string(out, p.id);
      out += ",\"content\":";
      json::append_json_string(out, p.text);
      out += '}';
    }
    return true;
  }
  const Groups g = group(r, m);
  if (g.function_call) {
    err = "cannot render a new legacy function_call";
    return false;
  }
  out += "{\"role\":\"";
  out += role_name(m.role);
  out += "\",\"content\":";
  if (!content_value(r, {}, m, json::kNone, g.content, out, err)) return false;
  if (!g.calls.empty()) {
    out += ",\"tool_calls\":";
    if (!tool_calls_value(r, {}, m, json::kNone, g.calls, out, err)) return false;
  }
  if (!g.reasoning_content.empty() || !g.reasoning.empty()) {
    std::string joined;
    for (const Part* p : g.reasoning_content) joined += p->text;
    for (const Part* p : g.reasoning) joined += p->text;
    out += ",\"reasoning_content\":";
    json::append_json_string(out, joined);
  }
  out += '}';
  return true;
}

bool render_system(const ParsedRequest&, std::string_view, const std::vector<const Message*>&, std::string&,
                   std::string& err) {
  err = "OpenAI chat has no system field: system prompts are messages";
  return false;
}

}  // namespace openai_chat
}  // namespace td::providers::detail
