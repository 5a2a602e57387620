// A pruning profile: every constant a strategy uses, with defaults taken from
// the seed systems (../shared/reference/seed-systems.md) unless replay
// measured better ones. config/ parses a YAML profile by visiting the fields
// by name, so a field added here is configurable at once, and a key that is
// not a field is an error.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace td::pruning {

struct Profile {
  std::string name = "default";
  std::vector<std::string> models = {"*"};  // globs on the request's model
  bool enabled = true;                      // false: forward untouched
  bool shadow = false;                      // compute savings, change nothing

  // Usage: ask OpenAI streams for usage and splice it back out (issue 4).
  bool stream_usage = true;

  // --- Working memory and the stale frontier (F6, principle 4) ---
  // The last `window_turns` turns are never touched (a turn: see
  // strategies/working_memory.hpp). omni-dev-fusion keeps 4 (x2 messages);
  // replay measured 3 (README "Compression (replay)").
  std::uint32_t window_turns = 3;
  // Anthropic context editing's `keep`: the last N tool results stay intact.
  std::uint32_t keep_tool_uses = 3;
  // The frontier moves in steps of this many turns, never turn by turn.
  std::uint32_t frontier_step_turns = 8;
  // Nothing is pruned until the history holds this many tokens (counted on
  // the history as the client sent it). Anthropic context editing triggers
  // at 100k; with the cache-economics gate below, replay measured 8k.
  std::uint64_t trigger_tokens = 8000;
  // A frontier step must save at least this many tokens (clear_at_least).
  std::uint64_t clear_at_least_tokens = 0;
  // Prompt-cache economics of a step: it is taken only when the tokens it
  // saves, at the cached-read price, over `payback_requests` later requests,
  // pay for rewriting the cached suffix at the cache-write price.
  double cache_read_price = 0.1;    // x base input price
  double cache_write_price = 1.25;  // x base input price (Anthropic 5-minute TTL)
  std::uint32_t payback_requests = 24;
  // ... and within this fraction of the turns the conversation already had
  // (a short conversation is not bet on to run long).
  double payback_turn_fraction = 0.4;
  // Tools whose calls and results are never pruned (Anthropic exclude_tools).
  std::vector<std::string> exclude_tools;

  // --- Old thinking (F10; codetether thinking_prune) ---
  bool prune_thinking = true;
  std::uint32_t thinking_keep_last_messages = 4;

  // --- Identical tool calls (F9; codetether tool_call_dedup, off there too) ---
  bool dedup_tool_calls = false;
  std::uint64_t dedup_call_min_bytes = 64;

  // --- Identical tool outputs (F8; codetether dedup) ---
  bool dedup_tool_outputs = true;
  std::uint64_t dedup_min_bytes = 256;

  // --- Low-entropy folding (F11) ---
  bool fold_low_entropy = true;
  std::uint32_t fold_min_run = 4;          // identical / near-identical lines in a row
  std::uint64_t fold_blob_min_bytes = 256;  // base64 / hex runs at least this long

  // --- Stale tool outputs (F7; codetether snippet: 1 KiB + 1 KiB over 4 KiB;
  // replay measured 96 + 96 over 384, with error lines and names kept) ---
  bool snip_stale_outputs = true;
  std::uint64_t snippet_threshold_bytes = 384;
  std::uint64_t snippet_head_bytes = 96;
  std::uint64_t snippet_tail_bytes = 96;
  std::uint32_t snippet_error_lines = 8;  // error lines kept from the hidden middle
  std::uint32_t snippet_names = 16;      // names of the hidden middle listed (0: none)

  // --- Stale assistant text (prose and tool-call arguments) ---
  bool snip_assistant_text = true;
  bool snip_tool_arguments = true;
  std::uint64_t assistant_threshold_bytes = 192;
  std::uint64_t assistant_head_bytes = 80;
  std::uint64_t assistant_tail_bytes = 80;

  // --- Trim-middle (F12; codetether streaming_llm, off there too) ---
  bool trim_middle = false;
  std::uint32_t sink_messages = 2;     // first non-system messages kept (attention sinks)
  std::uint32_t recent_messages = 16;  // at least this many last messages kept
  std::uint64_t trim_budget_tokens = 100000;  // trimmed only while the history is over this

  template <class Visitor>
  void visit(Visitor&& v) {
    v("models", models);
    v("enabled", enabled);
    v("shadow", shadow);
    v("stream_usage", stream_usage);
    v("window_turns", window_turns);
    v("keep_tool_uses", keep_tool_uses);
    v("frontier_step_turns", frontier_step_turns);
    v("trigger_tokens", trigger_tokens);
    v("clear_at_least_tokens", clear_at_least_tokens);
    v("cache_read_price", cache_read_price);
    v("cache_write_price", cache_write_price);
    v("payback_requests", payback_requests);
    v("payback_turn_fraction", payback_turn_fraction);
    v("exclude_tools", exclude_tools);
    v("prune_thinking", prune_thinking);
    v("thinking_keep_last_messages", thinking_keep_last_messages);
    v("dedup_tool_calls", dedup_tool_calls);
    v("dedup_call_min_bytes", dedup_call_min_bytes);
    v("dedup_tool_outputs", dedup_tool_outputs);
    v("dedup_min_bytes", dedup_min_bytes);
    v("fold_low_entropy", fold_low_entropy);
    v("fold_min_run", fold_min_run);
    v("fold_blob_min_bytes", fold_blob_min_bytes);
    v("snip_stale_outputs", snip_stale_outputs);
    v("snippet_threshold_bytes", snippet_threshold_bytes);
    v("snippet_head_bytes", snippet_head_bytes);
    v("snippet_tail_bytes", snippet_tail_bytes);
    v("snippet_error_lines", snippet_error_lines);
    v("snippet_names", snippet_names);
    v("snip_assistant_text", snip_assistant_text);
    v("snip_tool_arguments", snip_tool_arguments);
    v("assistant_threshold_bytes", assistant_threshold_bytes);
    v("assistant_head_bytes", assistant_head_bytes);
    v("assistant_tail_bytes", assistant_tail_bytes);
    v("trim_middle", trim_middle);
    v("sink_messages", sink_messages);
    v("recent_messages", recent_messages);
    v("trim_budget_tokens", trim_budget_tokens);
  }
};

}  // namespace td::pruning
