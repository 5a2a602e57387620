#include "pruning/strategies/identical_tool_calls.hpp"

#include <string>
#include <unordered_map>

#include "pruning/snip.hpp"
#include "pruning/strategies/common.hpp"

namespace td::pruning {

namespace {

// A JSON string literal for an id (ids are ASCII in practice; escape anyway).
std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      static const char* hex = "0123456789abcdef";
      out += "\\u00";
      out += hex[u >> 4];
      out += hex[u & 15];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

StrategyStats identical_tool_calls(Conversation& conv, const IdenticalToolCallsOptions& opt, std::uint32_t limit) {
  StrategyStats st{.name = "identical_tool_calls"};
  if (!opt.identical_tool_calls) return st;
  auto& msgs = conv.messages;
  if (limit > msgs.size()) limit = static_cast<std::uint32_t>(msgs.size());
  std::unordered_map<std::string, std::string> first;  // name \0 arguments -> first id
  for (std::uint32_t i = 0; i < limit; ++i) {
    Message& m = msgs[i];
    if (m.role != Role::Assistant || m.removed) continue;
    for (Part& p : m.parts) {
      if (p.kind != PartKind::ToolCall || p.text.size() < opt.identical_tool_calls_min_bytes) continue;
      std::string key = p.name + '\0' + p.text;
      auto [it, inserted] = first.try_emplace(std::move(key), p.id);
      if (inserted || !p.editable || detail::excluded_tool(opt.exclude_tools, p.name)) continue;
      std::string args = "{\"same_arguments_as_call\":" + json_string(it->second);
      // The arguments' recall handle (pruning/snip.hpp): tokendiet_recall gives them back.
      if (opt.recall) args += ",\"recall\":\"" + recall_handle(p.text) + "\"";
      args += "}";
      if (args.size() >= p.text.size()) continue;
      st.add(i, p.text.size(), args.size());
      cut_text(m, p, std::move(args), opt.recall);
    }
  }
  return st;
}

}  // namespace td::pruning
