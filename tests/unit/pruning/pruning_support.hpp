// Builders and a bytes/4 counter for the pruning unit tests.
#pragma once

#include <string>
#include <vector>

#include "pruning/conversation.hpp"
#include "pruning/pipeline.hpp"
#include "pruning/profile.hpp"
#include "pruning/token_counter.hpp"

namespace td::pruning::test {

// ceil(bytes / 4): the seeds' estimator, enough to compare before and after.
class QuarterCounter : public TokenCounter {
 public:
  std::uint64_t count(std::string_view text) const override { return (text.size() + 3) / 4; }
};

inline Part text_part(std::string text) {
  Part p;
  p.kind = PartKind::Text;
  p.text = std::move(text);
  return p;
}
inline Part call_part(std::string id, std::string name, std::string args) {
  Part p;
  p.kind = PartKind::ToolCall;
  p.id = std::move(id);
  p.name = std::move(name);
  p.text = std::move(args);
  return p;
}
inline Part result_part(std::string id, std::string text) {
  Part p;
  p.kind = PartKind::ToolResult;
  p.id = std::move(id);
  p.text = std::move(text);
  return p;
}
inline Part thinking_part(std::string text, std::string signature = {}) {
  Part p;
  p.kind = PartKind::Thinking;
  p.text = std::move(text);
  p.signature = std::move(signature);
  return p;
}

inline Message msg(Role role, std::vector<Part> parts) {
  Message m;
  m.role = role;
  m.parts = std::move(parts);
  return m;
}
inline Message system_msg(std::string t) { return msg(Role::System, {text_part(std::move(t))}); }
inline Message user_msg(std::string t) { return msg(Role::User, {text_part(std::move(t))}); }
inline Message assistant_msg(std::string t) { return msg(Role::Assistant, {text_part(std::move(t))}); }
inline Message assistant_call(std::string id, std::string args, std::string text = "let me look",
                              std::string name = "bash") {
  return msg(Role::Assistant, {text_part(std::move(text)), call_part(std::move(id), std::move(name), std::move(args))});
}
inline Message tool_msg(std::string id, std::string text) {
  return msg(Role::Tool, {result_part(std::move(id), std::move(text))});
}

// n numbered lines "prefix i\n".
inline std::string numbered_lines(int n, const std::string& prefix) {
  std::string s;
  for (int i = 0; i < n; ++i) s += prefix + " " + std::to_string(i) + " " + std::string(20, 'x') + "\n";
  return s;
}

// An agent loop: system, user task, then `steps` x (assistant call, tool
// result). Step k's output is `output(k)`.
template <class F>
Conversation agent_loop(int steps, F output) {
  Conversation c;
  c.messages.push_back(system_msg("You are a helpful assistant."));
  c.messages.push_back(user_msg("Fix the bug in src/app.py"));
  for (int k = 0; k < steps; ++k) {
    std::string id = "call_" + std::to_string(k);
    c.messages.push_back(assistant_call(id, "{\"command\":\"step " + std::to_string(k) + "\"}"));
    c.messages.push_back(tool_msg(id, output(k)));
  }
  for (std::size_t i = 0; i < c.messages.size(); ++i) {
    c.messages[i].origin = static_cast<std::uint32_t>(i);
    for (std::size_t j = 0; j < c.messages[i].parts.size(); ++j)
      c.messages[i].parts[j].origin = static_cast<std::uint32_t>(j);
  }
  return c;
}

// A message as text, for comparing what would be sent.
inline std::string render(const Message& m) {
  std::string s = std::to_string(int(m.role)) + "|";
  for (const Part& p : m.parts)
    s += std::to_string(int(p.kind)) + "[" + p.id + "," + p.name + "," + p.signature + "]" + p.text + "\x1f";
  return s;
}
inline std::vector<std::string> render(const Conversation& c) {
  std::vector<std::string> out;
  for (const Message& m : c.messages)
    if (!m.removed) out.push_back(render(m));
  return out;
}

// A message with every field, for checking that two ways of computing a
// request agree on everything the writers read.
inline std::string dump(const Message& m) {
  std::string s = std::to_string(int(m.role)) + "|" + m.name + "|" + std::to_string(m.origin) + "|" +
                  std::to_string(m.changed) + std::to_string(m.removed) + std::to_string(m.system_field) +
                  std::to_string(m.cache_protected) + "|";
  for (const Part& p : m.parts)
    s += std::to_string(int(p.kind)) + "[" + p.id + "," + p.name + "," + p.signature + "," +
         std::to_string(p.opaque_bytes) + "," + std::to_string(p.origin) + "," + std::to_string(p.editable) +
         std::to_string(p.edited) + std::to_string(p.is_error) + "]" + p.text + "\x1f";
  return s;
}
inline std::vector<std::string> dump(const Conversation& c) {
  std::vector<std::string> out;
  for (const Message& m : c.messages) out.push_back(dump(m));
  return out;
}

inline std::string dump(const PipelineResult& r) {
  std::string s = std::to_string(r.tokens_before) + "/" + std::to_string(r.tokens_after) + " stale " +
                  std::to_string(r.stale_turns) + "/" + std::to_string(r.stale_messages) + " trimmed " +
                  std::to_string(r.trimmed_until) + " fired";
  for (std::string_view f : r.fired) (s += " ") += f;
  for (const auto& st : r.strategies)
    s += " " + std::string(st.name) + ":" + std::to_string(st.hits) + "/" + std::to_string(st.bytes_saved);
  return s;
}

// A profile that prunes from the first request on and steps every 2 turns
// (no trigger, every step paid back, no loss cap), keeping 2 turns.
inline Profile stepping_profile() {
  Profile p;
  p.trigger_tokens = 0;
  p.payback_requests = 1000;
  p.payback_turn_fraction = 1000;
  p.max_loss = 1000;
  p.frontier_step_turns = 2;
  p.window_turns = 2;
  p.stale_tool_outputs_threshold_bytes = 64;
  p.stale_tool_outputs_head_bytes = 16;
  p.stale_tool_outputs_tail_bytes = 16;
  p.identical_tool_outputs_min_bytes = 32;
  p.stale_tool_outputs_min_saving_bytes = 0;  // the small outputs here are cut for a few bytes
  p.stale_assistant_text_min_saving_bytes = 0;
  return p;
}

// The pruning steps in the proxy's order (diet/diet.hpp): count,
// decide by the profile, run the pipeline as decided.
inline PipelineResult prune(Conversation& conv, const Profile& profile, const TokenCounter& counter,
                            PipelineCaches* caches = nullptr) {
  const Counted counted = count_tokens(conv, counter, caches);
  return run_pipeline(conv, counted, decide(counted, profile), counter, caches);
}

// A bytes/4 counter whose counts may be cached (a non-zero cache salt): with
// PipelineCaches, the pipeline memoizes its plans (pruning/lossy_plan.hpp).
class CachedQuarterCounter : public QuarterCounter {
 public:
  std::uint64_t cache_salt() const override { return 0x71756172746572ULL; }
};

}  // namespace td::pruning::test
