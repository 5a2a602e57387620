// Upstream answers of one recall round in each wire format, for the recall
// merge and recall filter tests: some text, then tokendiet_recall calls (their
// arguments as JSON objects) and optionally a call of the client's own tool.
// Written the way providers write them, with a few liberties a byte-for-byte
// relay must keep: a space after each ':' and ',' in the JSON, and Responses'
// sequence numbers starting at 1.
#pragma once

#include <string>
#include <vector>

#include "providers/api.hpp"

namespace recall_rounds {

using td::providers::Api;

struct Round {
  std::string text = "Let me look.";
  std::vector<std::string> recalls;  // each call's arguments, e.g. {"id":"td-aaa"}
  bool client_call = false;          // a call of the client's tool "bash" after the recalls
  int input_tokens = 100;
};

// `json` with a space after every ':' and ',' outside strings.
inline std::string loose(const std::string& json) {
  std::string out;
  bool in_string = false, escaped = false;
  for (char c : json) {
    out += c;
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == ':' || c == ',') {
      out += ' ';
    }
  }
  return out;
}

inline std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

inline std::string event(const std::string& name, const std::string& data) {
  return (name.empty() ? "" : "event: " + name + "\n") + "data: " + loose(data) + "\n\n";
}

inline std::string anthropic(const Round& r, bool sse) {
  const std::string in = std::to_string(r.input_tokens);
  const bool calls = !r.recalls.empty() || r.client_call;
  const std::string stop = calls ? "tool_use" : "end_turn";
  std::vector<std::string> blocks{R"({"type":"text","text":)" + quoted(r.text) + "}"};
  for (std::size_t i = 0; i < r.recalls.size(); ++i)
    blocks.push_back(R"({"type":"tool_use","id":"toolu_r)" + std::to_string(i) +
                     R"(","name":"tokendiet_recall","input":)" + r.recalls[i] + "}");
  if (r.client_call) blocks.push_back(R"({"type":"tool_use","id":"toolu_c","name":"bash","input":{"cmd":"ls"}})");
  if (!sse) {
    std::string content;
    for (const auto& b : blocks) content += (content.empty() ? "" : ",") + b;
    return loose(R"({"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[)" + content +
                 R"(],"stop_reason":")" + stop + R"(","usage":{"input_tokens":)" + in + R"(,"output_tokens":10}})");
  }
  std::string s = event(
      "message_start",
      R"({"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-x","usage":{"input_tokens":)" +
          in + R"(,"output_tokens":1}}})");
  s += event("ping", R"({"type":"ping"})");
  s += event("content_block_start",
             R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})");
  s += event("content_block_delta",
             R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":)" + quoted(r.text) + "}}");
  s += event("content_block_stop", R"({"type":"content_block_stop","index":0})");
  int index = 1;
  auto tool = [&](const std::string& id, const std::string& name, const std::string& args) {
    const std::string i = std::to_string(index++);
    s += event("content_block_start", R"({"type":"content_block_start","index":)" + i +
                                          R"(,"content_block":{"type":"tool_use","id":")" + id + R"(","name":")" +
                                          name + R"(","input":{}}})");
    s += event("content_block_delta", R"({"type":"content_block_delta","index":)" + i +
                                          R"(,"delta":{"type":"input_json_delta","partial_json":)" + quoted(args) +
                                          "}}");
    s += event("content_block_stop", R"({"type":"content_block_stop","index":)" + i + "}");
  };
  for (std::size_t i = 0; i < r.recalls.size(); ++i)
    tool("toolu_r" + std::to_string(i), "tokendiet_recall", r.recalls[i]);
  if (r.client_call) tool("toolu_c", "bash", R"({"cmd":"ls"})");
  s += event("message_delta", R"({"type":"message_delta","delta":{"stop_reason":")" + stop +
                                  R"(","stop_sequence":null},"usage":{"output_tokens":10}})");
  s += event("message_stop", R"({"type":"message_stop"})");
  return s;
}

inline std::string openai_chat(const Round& r, bool sse) {
  const std::string in = std::to_string(r.input_tokens);
  std::vector<std::string> calls;
  for (std::size_t i = 0; i < r.recalls.size(); ++i)
    calls.push_back(R"({"id":"call_r)" + std::to_string(i) +
                    R"(","type":"function","function":{"name":"tokendiet_recall","arguments":)" + quoted(r.recalls[i]) +
                    "}}");
  if (r.client_call)
    calls.push_back(R"({"id":"call_c","type":"function","function":{"name":"bash","arguments":"{\"cmd\":\"ls\"}"}})");
  const std::string finish = calls.empty() ? "stop" : "tool_calls";
  const std::string usage = R"({"prompt_tokens":)" + in + R"(,"completion_tokens":10,"total_tokens":)" +
                            std::to_string(r.input_tokens + 10) + "}";
  if (!sse) {
    std::string list;
    for (const auto& c : calls) list += (list.empty() ? "" : ",") + c;
    return loose(
        R"({"id":"chatcmpl-1","object":"chat.completion","model":"gpt-x","choices":[{"index":0,"message":{"role":"assistant","content":)" +
        quoted(r.text) + (calls.empty() ? "" : R"(,"tool_calls":[)" + list + "]") + R"(},"finish_reason":")" + finish +
        R"("}],"usage":)" + usage + "}");
  }
  auto chunk = [](const std::string& delta, const std::string& fin) {
    return event(
        "", R"({"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-x","choices":[{"index":0,"delta":)" +
                delta + R"(,"finish_reason":)" + fin + "}]}");
  };
  std::string s = chunk(R"({"role":"assistant","content":""})", "null");
  s += chunk(R"({"content":)" + quoted(r.text) + "}", "null");
  std::size_t index = 0;
  auto tool = [&](const std::string& id, const std::string& name, const std::string& args) {
    const std::string i = std::to_string(index++);
    s += chunk(R"({"tool_calls":[{"index":)" + i + R"(,"id":")" + id + R"(","type":"function","function":{"name":")" +
                   name + R"(","arguments":""}}]})",
               "null");
    s += chunk(R"({"tool_calls":[{"index":)" + i + R"(,"function":{"arguments":)" + quoted(args) + "}}]}", "null");
  };
  for (std::size_t i = 0; i < r.recalls.size(); ++i)
    tool("call_r" + std::to_string(i), "tokendiet_recall", r.recalls[i]);
  if (r.client_call) tool("call_c", "bash", R"({"cmd":"ls"})");
  s += chunk("{}", "\"" + finish + "\"");
  s += event(
      "", R"({"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-x","choices":[],"usage":)" + usage + "}");
  s += "data: [DONE]\n\n";
  return s;
}

inline std::string responses(const Round& r, bool sse) {
  const std::string in = std::to_string(r.input_tokens);
  std::vector<std::string> items{
      R"({"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":)" +
      quoted(r.text) + R"(,"annotations":[]}]})"};
  for (std::size_t i = 0; i < r.recalls.size(); ++i)
    items.push_back(R"({"type":"function_call","id":"fc_r)" + std::to_string(i) + R"(","call_id":"call_r)" +
                    std::to_string(i) + R"(","name":"tokendiet_recall","arguments":)" + quoted(r.recalls[i]) +
                    R"(,"status":"completed"})");
  if (r.client_call)
    items.push_back(
        R"({"type":"function_call","id":"fc_c","call_id":"call_c","name":"bash","arguments":"{\"cmd\":\"ls\"}","status":"completed"})");
  std::string output;
  for (const auto& it : items) output += (output.empty() ? "" : ",") + it;
  const std::string usage =
      R"({"input_tokens":)" + in + R"(,"output_tokens":10,"total_tokens":)" + std::to_string(r.input_tokens + 10) + "}";
  const std::string done = R"({"id":"resp_1","object":"response","status":"completed","model":"gpt-x","output":[)" +
                           output + R"(],"usage":)" + usage + "}";
  if (!sse) return loose(done);
  int seq = 1;
  std::string s;
  auto ev = [&](const std::string& type, const std::string& rest) {
    s += event(type, R"({"type":")" + type + R"(","sequence_number":)" + std::to_string(seq++) + rest + "}");
  };
  ev("response.created",
     R"(,"response":{"id":"resp_1","object":"response","status":"in_progress","model":"gpt-x","output":[],"usage":null})");
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string oi = R"(,"output_index":)" + std::to_string(i);
    ev("response.output_item.added", oi + R"(,"item":)" + items[i]);
    if (i == 0)
      ev("response.output_text.delta", oi + R"(,"item_id":"msg_1","content_index":0,"delta":)" + quoted(r.text));
    ev("response.output_item.done", oi + R"(,"item":)" + items[i]);
  }
  ev("response.completed", R"(,"response":)" + done);
  return s;
}

inline std::string gemini(const Round& r, bool sse) {
  const std::string in = std::to_string(r.input_tokens);
  std::string calls;
  for (const auto& a : r.recalls) calls += R"(,{"functionCall":{"name":"tokendiet_recall","args":)" + a + "}}";
  if (r.client_call) calls += R"(,{"functionCall":{"name":"bash","args":{"cmd":"ls"}}})";
  const std::string usage = R"("usageMetadata":{"promptTokenCount":)" + in +
                            R"(,"candidatesTokenCount":10,"totalTokenCount":)" + std::to_string(r.input_tokens + 10) +
                            "}";
  auto chunk = [&](const std::string& parts, bool last) {
    return R"({"candidates":[{"content":{"role":"model","parts":[)" + parts + "]}" +
           (last ? R"(,"finishReason":"STOP")" : "") + R"(,"index":0}],)" + usage +
           R"(,"modelVersion":"gemini-x","responseId":"g1"})";
  };
  if (!sse) return loose(chunk(R"({"text":)" + quoted(r.text) + "}" + calls, true));
  return event("", chunk(R"({"text":"Let "})", false)) +
         event("", chunk(R"({"text":)" + quoted(r.text) + "}" + calls, true));
}

inline std::string round(Api api, const Round& r, bool sse) {
  switch (api) {
    case Api::anthropic:
      return anthropic(r, sse);
    case Api::openai_chat:
      return openai_chat(r, sse);
    case Api::openai_responses:
      return responses(r, sse);
    case Api::gemini:
      return gemini(r, sse);
  }
  return {};
}

// A request body of the format that the recall loop can continue.
inline std::string request(Api api) {
  switch (api) {
    case Api::anthropic:
      return R"({"model":"claude-x","stream":true,"messages":[{"role":"user","content":"go"}]})";
    case Api::openai_chat:
      return R"({"model":"gpt-x","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"go"}]})";
    case Api::openai_responses:
      return R"({"model":"gpt-x","stream":true,"input":[{"role":"user","content":"go"}]})";
    case Api::gemini:
      return R"({"contents":[{"role":"user","parts":[{"text":"go"}]}]})";
  }
  return {};
}

// The path a request of the format goes to.
inline std::string target(Api api, bool sse) {
  switch (api) {
    case Api::anthropic:
      return "/v1/messages";
    case Api::openai_chat:
      return "/v1/chat/completions";
    case Api::openai_responses:
      return "/v1/responses";
    case Api::gemini:
      return sse ? "/v1beta/models/gemini-x:streamGenerateContent?alt=sse" : "/v1beta/models/gemini-x:generateContent";
  }
  return {};
}

inline constexpr Api kApis[] = {Api::anthropic, Api::openai_chat, Api::openai_responses, Api::gemini};

}  // namespace recall_rounds
