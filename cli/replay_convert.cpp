#include "cli/replay_convert.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "providers/request.hpp"
#include "pruning/conversation.hpp"

namespace td::cli {
namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void str(Writer& w, std::string_view s) { w.String(s.data(), static_cast<rapidjson::SizeType>(s.size())); }

void text_message(Writer& w, const char* role, const std::string& content) {
  w.StartObject();
  w.Key("role"), w.String(role);
  w.Key("content"), str(w, content);
  w.EndObject();
}

void join(std::string& out, const std::string& text) {
  if (text.empty()) return;
  if (!out.empty()) out += '\n';
  out += text;
}

// One message of the conversation as OpenAI chat messages: its tool
// results first (each a tool message), then the rest.
void write_message(Writer& w, const pruning::Message& m) {
  std::string text, thinking;
  bool calls = false;
  for (const pruning::Part& p : m.parts) {
    if (p.kind == pruning::PartKind::ToolResult) {
      w.StartObject();
      w.Key("role"), w.String("tool");
      w.Key("tool_call_id"), str(w, p.id);
      w.Key("content"), str(w, p.text);
      w.EndObject();
    } else if (p.kind == pruning::PartKind::Text) {
      join(text, p.text);
    } else if (p.kind == pruning::PartKind::Thinking) {
      join(thinking, p.text);
    } else if (p.kind == pruning::PartKind::ToolCall) {
      calls = true;
    }
  }
  switch (m.role) {
    case pruning::Role::System:
      if (!text.empty()) text_message(w, "system", text);
      return;
    case pruning::Role::User:
    case pruning::Role::Tool:
      if (!text.empty()) text_message(w, "user", text);
      return;
    case pruning::Role::Assistant:
      break;
  }
  if (text.empty() && thinking.empty() && !calls) return;
  w.StartObject();
  w.Key("role"), w.String("assistant");
  w.Key("content"), str(w, text);
  if (!thinking.empty()) w.Key("reasoning_content"), str(w, thinking);
  if (calls) {
    w.Key("tool_calls"), w.StartArray();
    for (const pruning::Part& p : m.parts) {
      if (p.kind != pruning::PartKind::ToolCall) continue;
      w.StartObject();
      w.Key("id"), str(w, p.id);
      w.Key("type"), w.String("function");
      w.Key("function"), w.StartObject();
      w.Key("name"), str(w, p.name);
      w.Key("arguments"), str(w, p.text);
      w.EndObject();
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
}

}  // namespace

std::optional<std::string> trajectory_from_request(providers::Api format, std::string_view body, std::string_view id,
                                                   std::string& error) {
  providers::ParseOutcome parsed = providers::parse(format, body);
  if (!parsed.request) {
    error = parsed.error;
    return std::nullopt;
  }
  const pruning::Conversation& c = parsed.request->conversation;
  rapidjson::StringBuffer sb;
  Writer w(sb);
  w.StartObject();
  w.Key("id"), str(w, id);
  w.Key("model"), str(w, c.model);
  w.Key("format"), str(w, providers::name(format));
  w.Key("messages"), w.StartArray();
  for (const pruning::Message& m : c.messages) write_message(w, m);
  w.EndArray();
  w.EndObject();
  return std::string(sb.GetString(), sb.GetSize());
}

}  // namespace td::cli
