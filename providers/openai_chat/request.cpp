// OpenAI chat completions (/v1/chat/completions) and the many OpenAI-compatible
// APIs (DeepSeek, OpenRouter, vLLM, Gemini's OpenAI endpoint).
//
// messages[]: role system|developer (-> System), user, assistant, tool and
// legacy function (-> Tool). content: string, null or an array of parts (text
// parts are editable, image_url / input_audio / file / refusal are Opaque).
// Assistant tool_calls (function or custom) and legacy function_call become
// ToolCall parts; the legacy forms carry no id, so call and result pair by
// name (id = name). reasoning_content (DeepSeek) and reasoning (OpenRouter)
// become Thinking parts. Part order in a message: thinking, content, calls.
#include <string>

#include "providers/formats.hpp"
#include "providers/openai_chat/openai_chat.hpp"
#include "providers/parsed_message_memo.hpp"
#include "providers/part_splice.hpp"

namespace td::providers::detail {
namespace {

using json::Type;
using pruning::PartKind;
using pruning::Role;

bool parse_role(const json::Document& d, std::uint32_t n, Role& role) {
  if (!is(d, n, Type::String)) return false;
  if (d.str_is(n, "user"))
    role = Role::User;
  else if (d.str_is(n, "assistant"))
    role = Role::Assistant;
  else if (d.str_is(n, "tool") || d.str_is(n, "function"))
    role = Role::Tool;
  else if (d.str_is(n, "system") || d.str_is(n, "developer"))
    role = Role::System;
  else
    return false;
  return true;
}

// Text of an array of content parts when every one is {"type":"text","text":...}.
bool all_text_parts(const json::Document& d, std::uint32_t arr, std::string& text) {
  bool all = true;
  for (std::uint32_t c = d.node(arr).first; c != json::kNone; c = d.node(c).next) {
    std::array<std::uint32_t, 2> f;
    if (!is(d, c, Type::Object) || !pick(d, c, std::array<std::string_view, 2>{"type", "text"}, f)) {
      all = false;
      continue;
    }
    if (is(d, f[1], Type::String)) {
      if (!text.empty()) text += '\n';
      d.append_str(f[1], text);
    }
    if (!d.str_is(f[0], "text") || !is(d, f[1], Type::String)) all = false;
  }
  return all;
}

bool parse_tool_call(ParsedRequest& r, Message& m, std::uint32_t elem, std::string& err) {
  const auto& d = r.doc;
  std::array<std::uint32_t, 4> f;
  if (!is(d, elem, Type::Object) ||
      !pick(d, elem, std::array<std::string_view, 4>{"id", "function", "custom", "type"}, f)) {
    err = "malformed tool call";
    return false;
  }
  std::uint32_t body = is(d, f[1], Type::Object) ? f[1] : is(d, f[2], Type::Object) ? f[2] : json::kNone;
  if (body == json::kNone) {
    Part& p = add_part(r, m, PartKind::Opaque, elem, Field::ToolCalls, {});
    p.opaque_bytes = d.raw(elem).size();
    return true;
  }
  const bool custom = body == f[2];
  std::array<std::uint32_t, 2> g;
  if (!pick(d, body, std::array<std::string_view, 2>{"name", custom ? "input" : "arguments"}, g)) {
    err = "malformed tool call";
    return false;
  }
  TextSlot slot = is(d, g[1], Type::String) ? string_slot(d, g[1])
                  : g[1] == json::kNone     ? insert_slot(d, body, custom ? "input" : "arguments")
                                            : TextSlot{};
  Part& p = add_part(r, m, PartKind::ToolCall, elem, Field::ToolCalls, slot);
  if (is(d, f[0], Type::String)) p.id = d.str(f[0]);
  if (is(d, g[0], Type::String)) p.name = d.str(g[0]);
  if (is(d, g[1], Type::String)) p.text = d.str(g[1]);
  return true;
}

bool parse_message(ParsedRequest& r, std::uint32_t node, std::string& err) {
  const auto& d = r.doc;
  enum { kRole, kContent, kToolCalls, kFunctionCall, kToolCallId, kName, kReasoningContent, kReasoning };
  std::array<std::uint32_t, 8> f;
  if (!is(d, node, Type::Object)) {
    err = "message is not an object";
    return false;
  }
  if (!pick(d, node,
            std::array<std::string_view, 8>{"role", "content", "tool_calls", "function_call", "tool_call_id", "name",
                                            "reasoning_content", "reasoning"},
            f)) {
    err = "message has a duplicate member";
    return false;
  }
  Message m;
  if (!parse_role(d, f[kRole], m.role)) {
    err = "message role missing or unknown";
    return false;
  }
  m.origin = static_cast<std::uint32_t>(r.messages.size());
  r.messages.push_back(MessageSource{node, static_cast<std::uint32_t>(r.parts.size()), 0, false});
  // A participant name is billed (tokens + 1); a tool message's name is its function's.
  if (m.role != Role::Tool && is(d, f[kName], Type::String)) m.name = d.str(f[kName]);

  if (is(d, f[kReasoningContent], Type::String)) {
    Part& p =
        add_part(r, m, PartKind::Thinking, json::kNone, Field::ReasoningContent, string_slot(d, f[kReasoningContent]));
    p.text = d.str(f[kReasoningContent]);
  }
  if (is(d, f[kReasoning], Type::String)) {
    Part& p = add_part(r, m, PartKind::Thinking, json::kNone, Field::Reasoning, string_slot(d, f[kReasoning]));
    p.text = d.str(f[kReasoning]);
  }

  const std::uint32_t content = f[kContent];
  const Type ct = content == json::kNone ? Type::Null : d.node(content).type;
  if (content != json::kNone && ct != Type::String && ct != Type::Null && ct != Type::Array) {
    err = "message content has the wrong type";
    return false;
  }
  if (m.role == Role::Tool) {
    // One result per tool message; an array of text parts is edited as a whole.
    TextSlot slot = content == json::kNone ? insert_slot(d, node, "content") : string_slot(d, content);
    std::string text;
    if (ct == Type::String) d.append_str(content, text);
    if (ct == Type::Array && !all_text_parts(d, content, text)) slot = TextSlot{};
    Part& p = add_part(r, m, PartKind::ToolResult, json::kNone, Field::Content, slot);
    p.text = std::move(text);
    const bool legacy = d.str_is(f[kRole], "function");
    if (is(d, f[kName], Type::String)) p.name = d.str(f[kName]);
    if (legacy)
      p.id = p.name;
    else if (is(d, f[kToolCallId], Type::String))
      p.id = d.str(f[kToolCallId]);
  } else if (ct == Type::String) {
    Part& p = add_part(r, m, PartKind::Text, json::kNone, Field::Content, string_slot(d, content));
    p.text = d.str(content);
  } else if (ct == Type::Array) {
    for (std::uint32_t c = d.node(content).first; c != json::kNone; c = d.node(c).next) {
      std::array<std::uint32_t, 2> g;
      if (!is(d, c, Type::Object) || !pick(d, c, std::array<std::string_view, 2>{"type", "text"}, g)) {
        err = "malformed content part";
        return false;
      }
      if (d.str_is(g[0], "text") && is(d, g[1], Type::String)) {
        Part& p = add_part(r, m, PartKind::Text, c, Field::Content, string_slot(d, g[1]));
        p.text = d.str(g[1]);
      } else {
        Part& p = add_part(r, m, PartKind::Opaque, c, Field::Content, {});
        p.opaque_bytes = d.raw(c).size();
      }
    }
  }

  if (is(d, f[kToolCalls], Type::Array)) {
    for (std::uint32_t c = d.node(f[kToolCalls]).first; c != json::kNone; c = d.node(c).next)
      if (!parse_tool_call(r, m, c, err)) return false;
  } else if (f[kToolCalls] != json::kNone && !is(d, f[kToolCalls], Type::Null)) {
    err = "tool_calls is not an array";
    return false;
  }
  if (is(d, f[kFunctionCall], Type::Object)) {
    std::array<std::uint32_t, 2> g;
    if (!pick(d, f[kFunctionCall], std::array<std::string_view, 2>{"name", "arguments"}, g)) {
      err = "malformed function_call";
      return false;
    }
    TextSlot slot = is(d, g[1], Type::String) ? string_slot(d, g[1]) : TextSlot{};
    Part& p = add_part(r, m, PartKind::ToolCall, f[kFunctionCall], Field::FunctionCall, slot);
    if (is(d, g[0], Type::String)) p.name = p.id = d.str(g[0]);
    if (is(d, g[1], Type::String)) p.text = d.str(g[1]);
  }
  r.conversation.messages.push_back(std::move(m));
  return true;
}

bool parse(ParsedRequest& r, std::string& err) {
  const auto& d = r.doc;
  std::array<std::uint32_t, 5> f;
  if (!pick(d, d.root(), std::array<std::string_view, 5>{"model", "stream", "messages", "tools", "functions"}, f)) {
    err = "duplicate top-level member";
    return false;
  }
  if (!is(d, f[2], Type::Array)) {
    err = "no messages array";
    return false;
  }
  if (is(d, f[0], Type::String)) r.model = d.str(f[0]);
  r.stream = is(d, f[1], Type::True);
  r.array = f[2];
  r.conversation.messages.reserve(d.node(f[2]).count);
  r.messages.reserve(d.node(f[2]).count);
  for (std::uint32_t c = d.node(f[2]).first; c != json::kNone; c = d.node(c).next) {
    // A message resent from an earlier request: its view, not its parse.
    const ParsedMessageKey key = r.memo ? parsed_message_key(r, c) : ParsedMessageKey{};
    if (r.memo && reuse_parsed_message(r, c, key)) continue;
    if (!parse_message(r, c, err)) return false;
    if (r.memo) remember_parsed_message(r, c, key);
  }
  std::vector<std::uint32_t> tools;
  if (f[3] != json::kNone) tools.push_back(f[3]);
  if (f[4] != json::kNone) tools.push_back(f[4]);
  fill_overhead(r, tools);
  return true;
}

}  // namespace

const FormatOps kOpenAIChatOps{
    parse, openai_chat::render_changed, openai_chat::render_new, openai_chat::render_system, "", "messages"};

}  // namespace td::providers::detail
