// A pruning profile: every constant a strategy uses, with defaults taken from
// prior art (docs/design.md §Strategies, Prior art) unless replay measured
// better ones. config/ parses a YAML profile by visiting the fields
// by name, so a field added here is configurable at once, and a key that is
// not a field is an error.
//
// A strategy's switch is its name, and its constants start with it: the
// name of its file (pruning/strategies/<name>.cpp), its function and the
// stat it reports (logs, ledger). Renamed keys still load, with a warning
// (config/renamed_keys.hpp). A strategy reads no Profile: its options are the
// fields it lists, cut from here (pruning/strategy_options.hpp).
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
  // The control arm (control_arm.hpp): this share of sessions (0..1) goes
  // untouched, the diet run in shadow, for `tokendiet usage --compare`.
  double control_fraction = 0;

  // Usage: ask OpenAI streams for usage and splice it back out (docs/design.md §Principles (1)).
  bool stream_usage = true;

  // --- Working memory and the stale frontier (F6, docs/design.md §Principles (4)) ---
  // The last `window_turns` turns are never touched (a turn: see
  // strategies/working_memory.hpp); replay measured 3 (docs/benchmarks.md
  // §Compression (replay)).
  std::uint32_t window_turns = 3;
  // Anthropic context editing's `keep`: the last N tool results stay intact.
  std::uint32_t keep_tool_uses = 3;
  // The frontier moves in steps of this many turns, never turn by turn.
  // Under the loss cap smaller steps fit more often: replay measured 4.
  std::uint32_t frontier_step_turns = 4;
  // Nothing is pruned until the history holds this many tokens (counted on
  // the history as the client sent it). Anthropic context editing triggers
  // at 100k; with the cache-economics gate below, replay chose 10k (docs/benchmarks.md
  // §Shorter notices: later, first steps come after the agents' first copies).
  std::uint64_t trigger_tokens = 10000;
  // A frontier step must save at least this many tokens (clear_at_least):
  // 128 covers OpenAI's cache granularity (cached prefixes in 128-token steps).
  std::uint64_t clear_at_least_tokens = 128;
  // Prompt-cache economics of a step: it is taken only when the tokens it
  // saves, at the cached-read price, over `payback_requests` later requests,
  // pay for rewriting the cached suffix at the cache-write price.
  double cache_read_price = 0.1;    // x base input price
  double cache_write_price = 1.25;  // x base input price (Anthropic 5-minute TTL)
  // 16 (24 before): cheaper on the charged replay's tuning set and within
  // its rounds target (docs/benchmarks.md §A shorter payback).
  std::uint32_t payback_requests = 16;
  // ... and within this fraction of the turns the conversation already had
  // (a short conversation is not bet on to run long).
  double payback_turn_fraction = 0.4;
  // The loss cap (F30, pruning/loss_cap.hpp): a step is taken only if the
  // session's cumulative input cost with tokendiet, that request included,
  // stays within (1 + max_loss) of its cost without.
  double max_loss = 0.10;
  // Tools whose calls and results are never pruned (Anthropic exclude_tools).
  std::vector<std::string> exclude_tools;

  // --- Old thinking (F10) ---
  bool old_thinking = true;
  std::uint32_t old_thinking_keep_last_messages = 4;

  // --- Identical tool calls (F9) ---
  bool identical_tool_calls = false;
  std::uint64_t identical_tool_calls_min_bytes = 64;

  // --- Identical tool outputs (F8) ---
  bool identical_tool_outputs = true;
  std::uint64_t identical_tool_outputs_min_bytes = 256;
  // What agents wrap around an output, left out when outputs are compared
  // (and kept, around the reference, in the later copy). Plain text, no
  // patterns. Lines at the start or end of an output beginning with one of
  // these: Codex's headers (unified exec and shell tool, Codex 0.169) and
  // Gemini CLI's shell wrapper (0.61: a new process group id every call).
  std::vector<std::string> identical_tool_outputs_wrapper_lines = {"Chunk ID: ",
                                                                   "Wall time: ",
                                                                   "Process exited with code ",
                                                                   "Process running with session ID ",
                                                                   "Original token count: ",
                                                                   "Exit code: ",
                                                                   "Output:",
                                                                   "Total output lines: ",
                                                                   "<untrusted_context>",
                                                                   "</untrusted_context>",
                                                                   "Process Group PGID: ",
                                                                   "Background PIDs: "};
  // <tag>...</tag> blocks at the start or end of an output: Claude Code's reminders.
  std::vector<std::string> identical_tool_outputs_wrapper_tags = {"system-reminder"};

  // --- Similar tool outputs (strategies/similar_tool_outputs.hpp) ---
  // A stale output mostly repeating an earlier one (at least `_min_shared`
  // of its bytes in lines the earlier one holds) becomes a reference to it
  // and the lines that differ; outputs under `_min_bytes` are not compared,
  // a diff over `_max_edits` deleted and inserted lines is given up (a bound
  // on the work: pruning/line_diff.hpp), a reference saving fewer than
  // `_min_saving_bytes` is not made. Off: with stale_tool_outputs on, replay
  // measured it lowering the cut (a re-read after an edit becomes a reference
  // short enough to be a kept read, kept whole instead of snipped;
  // docs/benchmarks.md §Agents' own truncation and repeats).
  bool similar_tool_outputs = false;
  std::uint64_t similar_tool_outputs_min_bytes = 512;
  double similar_tool_outputs_min_shared = 0.5;
  std::uint32_t similar_tool_outputs_max_edits = 256;
  std::uint64_t similar_tool_outputs_min_saving_bytes = 256;

  // --- Low-entropy folding (F11) ---
  bool low_entropy = true;
  std::uint32_t low_entropy_min_run = 4;           // identical / near-identical lines in a row
  std::uint64_t low_entropy_blob_min_bytes = 256;  // base64 / hex runs at least this long
  std::uint32_t low_entropy_names = 16;            // paths a similar-lines fold may hide (it names them all)

  // --- Stale tool outputs (F7; the defaults: docs/benchmarks.md §Compression (replay)) ---
  bool stale_tool_outputs = true;
  std::uint64_t stale_tool_outputs_threshold_bytes = 384;
  // Informative lines (snip.hpp). 160 with 384 names and fresh reads held
  // 32 turns: the cheapest settings on the charged replay's tuning set
  // within 2 recall rounds per 100 requests (docs/benchmarks.md §Defaults
  // within the rounds target).
  std::uint64_t stale_tool_outputs_head_bytes = 160;
  std::uint64_t stale_tool_outputs_tail_bytes = 80;
  // Error lines kept from the hidden middle, and names of it listed (0:
  // none): chosen on the charged replay (docs/benchmarks.md §Files being
  // edited (charged)): a listed name spares a recall, an "error" line of a
  // file read is mostly code.
  std::uint32_t stale_tool_outputs_error_lines = 0;
  // 384: a listed name spares the recall of a reference (a path, a
  // function) the agent uses later (docs/benchmarks.md §The recall call
  // (charged), §Defaults within the rounds target).
  std::uint32_t stale_tool_outputs_names = 384;
  // A file read of at most this many bytes stays whole until a newer read
  // or write of its path in its frontier block supersedes it
  // (strategies/file_reads.hpp). 0: off. Replay: docs/benchmarks.md §The lines
  // agents copy, §Shorter notices.
  std::uint64_t stale_tool_outputs_keep_reads_bytes = 2048;
  // ... only if an earlier call named its path (a file the agent came back to).
  bool stale_tool_outputs_keep_reads_revisited = true;
  // ... with its runs of lines that earlier kept reads hold, over
  // `_run_bytes`, each replaced by one line; lines compared from
  // `_line_chars` characters on (stripped).
  bool stale_tool_outputs_keep_reads_dedupe = true;
  // A stale cut of a Read (`    12→` lines) keeps the read's import and
  // declaration lines (strategies/read_outline.hpp): the charged replay
  // finds it cheaper than the recalls it spares (docs/benchmarks.md §The
  // outline of a read).
  bool stale_tool_outputs_read_outline = true;
  std::uint64_t stale_tool_outputs_keep_reads_dedupe_run_bytes = 48;
  std::uint64_t stale_tool_outputs_keep_reads_dedupe_line_chars = 8;
  // A read of a file the agent edited in the last `_keep_edited_turns` turns
  // stays whole once stale (strategies/edited_files.hpp). 0: off.
  std::uint32_t stale_tool_outputs_keep_edited_turns = 0;
  // A whole-file read numbered as Claude Code's Read numbers it, of at least
  // `_keep_fresh_reads_bytes`, stays whole for `_keep_fresh_reads_turns`
  // turns after it (strategies/edited_files.hpp; docs/benchmarks.md §Fresh
  // reads held). 0: off.
  std::uint32_t stale_tool_outputs_keep_fresh_reads_turns = 32;
  std::uint64_t stale_tool_outputs_keep_fresh_reads_bytes = 4096;
  // The reads held whole (edited and fresh) total at most this many bytes;
  // a newer read makes room by releasing the oldest.
  std::uint64_t stale_tool_outputs_held_reads_bytes = 65536;
  // ... and while the agent copies its lines (`stale_assistant_text_copied_line_bytes` long).
  bool stale_tool_outputs_keep_edited_copies = false;
  // A cut that saves fewer bytes than this (its notices and names counted) is not made.
  std::uint64_t stale_tool_outputs_min_saving_bytes = 32;
  // An output holding one of these (plain text) is a placeholder pointing to
  // a file the agent saved the whole output to, and is left alone: the model
  // can read that file again, and the placeholder is short. Gemini CLI
  // 0.61's masking and truncation, Claude Code 2.1's persisted outputs.
  std::vector<std::string> stale_tool_outputs_saved_markers = {"<tool_output_masked>", "Output too large. ",
                                                               "<persisted-output>", "Full output saved to: "};
  // An output holding one of these (plain text) was truncated or cleared by
  // the agent itself, and is cut like any other once stale, with each of
  // these kept visible in the cut (with the word it qualifies: a marker
  // starting with a space keeps the word before it, one ending with a space
  // the word after it, "…33930 tokens truncated…"): Codex 0.169's middle
  // cut, the line total it heads a cut output with, and its older warning, Gemini CLI's normalized outputs, Claude
  // Code's cleared results.
  std::vector<std::string> stale_tool_outputs_truncated_markers = {
      "Warning: truncated output (original token count: ",
      "Total output lines: ",
      " tokens truncated\u2026",
      " chars truncated\u2026",
      "[Message Normalized: Tool output exceeded size limit]",
      "[Old tool result content cleared]"};

  // --- Stale assistant text (prose and tool-call arguments) ---
  bool stale_assistant_text = true;  // the switch; the two below choose what it cuts
  bool stale_assistant_text_prose = true;
  bool stale_assistant_text_tool_arguments = true;
  std::uint64_t stale_assistant_text_threshold_bytes = 192;
  std::uint64_t stale_assistant_text_head_bytes = 60;  // docs/benchmarks.md §Copied lines by their view
  std::uint64_t stale_assistant_text_tail_bytes = 80;
  std::uint32_t stale_assistant_text_names = 16;  // names of the hidden middle listed (0: none)
  // A cut that saves fewer bytes than this (its notice and names counted) is not made.
  std::uint64_t stale_assistant_text_min_saving_bytes = 32;
  // Lines of at least this many bytes (stripped) that copy an earlier tool
  // output are kept by the cut (strategies/copied_lines.hpp): what the agent
  // copied once, it copies again. 0: off.
  std::uint64_t stale_assistant_text_copied_line_bytes = 20;

  // --- Trim-middle (F12) ---
  bool trim_middle = false;
  std::uint32_t trim_middle_sink_messages = 2;       // first non-system messages kept (attention sinks)
  std::uint32_t trim_middle_recent_messages = 16;    // at least this many last messages kept
  std::uint64_t trim_middle_budget_tokens = 100000;  // trimmed only while the history is over this

  // --- Recap (standard mode's, F15; strategies/recap.hpp): once a request
  // is over token_threshold (counted with the recap then in force), the
  // turns between the task and a grid point before the window become one
  // extractive recap message, when that pays for the cache rewrite or the
  // request would not fit the model's window otherwise.
  bool recap = true;
  std::uint64_t token_threshold = 200000;    // the seeds' tokenThreshold
  std::uint64_t recap_budget_tokens = 3000;  // the recap's size (the seed's ~3k new context)
  std::uint64_t recap_text_bytes = 200;      // what was asked / concluded, per turn (errors, commands: half)
  std::uint32_t recap_items = 6;             // files, commands and errors listed per turn and kind
  // --- Semantic mode: completed tasks (F14; strategies/completed_tasks.hpp,
  // tasks.hpp). Once a task the agent tracks is completed and the history is
  // over semantic_threshold tokens (the seed's semanticThreshold), that task's
  // tool outputs (and tool-call arguments of at least
  // completed_tasks_arguments_bytes) become tombstones naming their archive
  // entry; under the frontier's cost gate and loss cap. false: never (the
  // archive's fail-open re-run turns it off).
  bool completed_tasks = true;
  std::uint64_t semantic_threshold = 50000;
  // Smaller outputs stay (the stale cut keeps their names, a tombstone would
  // not): docs/benchmarks.md §Copied lines by their view.
  std::uint64_t completed_tasks_min_output_bytes = 4096;
  // Smaller arguments stay, and so do those of a call that writes a file
  // (strategies/completed_tasks.cpp).
  std::uint64_t completed_tasks_arguments_bytes = 1024;
  std::uint64_t completed_tasks_title_bytes = 80;  // a task's title in a tombstone is cut to this
  // The task tools watched, one spec each (syntax: pruning/tasks.hpp): Claude
  // Code 2.1 (TodoWrite; TaskCreate/TaskUpdate), Codex (update_plan), Gemini
  // CLI and deepagents (write_todos), opencode (todowrite), Roo and Kilo Code
  // (update_todo_list), the seed's SigmaTaskUpdate.
  std::vector<std::string> completed_tasks_tools = {
      "TodoWrite list=/todos text=/content status=/status",
      "TaskCreate text=/subject id_after=#",
      "TaskUpdate id=/taskId status=/status text=/subject",
      "update_plan list=/plan text=/step status=/status",
      "write_todos list=/todos text=/description|/content status=/status",
      "todowrite list=/todos text=/content status=/status",
      "update_todo_list checklist=/todos",
      "SigmaTaskUpdate list=/todos id=/id text=/content status=/status",
  };
  // The recap written by a model (the profile's `summarizer:` map;
  // docs/design.md §Policy): read by config/load.cpp apart from the profile's
  // visit(), since it is a nested map; used by the proxy only (pruning never
  // calls out).
  struct Summarizer {
    std::string provider;  // openai, anthropic, gemini; "": no summarizer (the extractive recap)
    std::string model;
    std::string upstream;  // the upstream it goes to; "": the one named like the provider
    std::uint32_t timeout_ms = 20000;
    std::uint32_t max_tokens = 0;  // the answer's cap; 0: recap_budget_tokens
    bool enabled() const { return !provider.empty(); }
  } summarizer;

  // --- The quota runway (docs/design.md §Policy): per-minute token limits of
  // the provider, per API key and quota group. 0: not known until the
  // provider's rate-limit headers say (OpenAI, Anthropic; Gemini sends none).
  std::uint64_t tpm_limit = 0;            // OpenAI: input + output; Gemini: input; Anthropic: both below when unset
  std::uint64_t itpm_limit = 0;           // Anthropic input tokens per minute, cache reads not counted (0: tpm_limit)
  std::uint64_t otpm_limit = 0;           // Anthropic output tokens per minute (0: tpm_limit)
  std::uint64_t quota_window_ms = 60000;  // the limits' window (a minute; shorter in tests)
  std::string quota_group;                // requests sharing a group share the limits; "": per model
  // Requests without an API key (anonymous clients; docs/design.md §Policy):
  // "separate", each conversation its own runway; "shared", all of them one
  // (a keyless upstream account that really is one quota).
  std::string anonymous_clients = "separate";
  bool anonymous_clients_shared() const { return anonymous_clients == "shared"; }

  // --- Survival (F16): when the request's tokens x quota_margin exceed what
  // the runway holds, compress to fit (levels: pipeline.hpp), else hold the
  // request up to max_wait_ms, else answer 429 with an honest Retry-After.
  bool survival = true;
  double quota_margin = 1.2;  // the seed's 20 % buffer
  std::uint64_t max_wait_ms = 20000;
  std::uint32_t min_turns = 1;  // survival needs this many turns of history (the seed's minTurns)

  // --- Thinking budget (F17): lowered while the runway left is under
  // thinking_budget_runway_tokens (or, when set, that fraction of the limit),
  // and restored only once it is back over twice that.
  bool thinking_budget = true;
  std::uint64_t thinking_budget_runway_tokens = 200000;   // the seed's threshold
  double thinking_budget_runway_fraction = 0;             // > 0: the threshold is this x the limit
  std::string thinking_budget_effort = "low";             // OpenAI effort, Gemini 3 level
  std::uint64_t thinking_budget_gemini_tokens = 8192;     // Gemini 2.5 thinkingBudget cap
  std::uint64_t thinking_budget_anthropic_tokens = 8192;  // Anthropic budget_tokens cap

  // --- A client's own compaction request (F29; client_compaction.hpp): a
  // request whose newest message is a user message holding one of these
  // (ASCII case ignored) goes upstream untouched, mode none. The defaults are
  // the known agents' own prompts (Codex, Claude Code, Gemini CLI).
  bool client_compaction = true;
  std::vector<std::string> client_compaction_patterns = {
      "You are performing a CONTEXT CHECKPOINT COMPACTION",           // Codex
      "Your task is to create a detailed summary of",                 // Claude Code (/compact, auto-compact)
      "generate the updated <state_snapshot>",                        // Gemini CLI's compression
      "Critically evaluate the <state_snapshot> you just generated",  // ... and its verification pass
  };
  // ... and these only when the request defines no tools (a summary request
  // that could not be an agent's working turn).
  std::vector<std::string> client_compaction_patterns_without_tools = {
      "summarize the conversation", "summarise the conversation", "summary of the conversation",
      "summarize our conversation", "summarise our conversation", "summary of our conversation",
  };

  // --- Context-overflow recovery (F21; proxy/filters/recovery_filter.hpp):
  // when the upstream answers a context-length error before any byte reached
  // the client, the request goes once more, compressed at survival's harder
  // levels to fit the window (the one the error names, else context_window,
  // else the model's known one; minus the output cap), with recovery_note
  // at the end of the context. A request that cannot fit gets the error.
  bool recovery = true;
  std::uint64_t context_window = 0;  // tokens, input + output; 0: the error's, else the model's known window
  double recovery_margin = 0.9;      // aim at this fraction of the window (counts are estimates)
  std::string recovery_note =
      "[tokendiet: older history was compressed to fit the model's context window; re-read or re-run what you need.]";

  // --- Re-anchoring (F22; reanchor.hpp): the anchor (this text, else the
  // first user message, cut to reanchor_max_bytes) restated in a new user
  // message after the newest one, so the cached prefix is not touched.
  bool reanchor_after_compression = true;  // after survival's harder levels and recovery's retry
  std::uint32_t reanchor_every_turns = 0;  // and every N turns (0: never)
  std::string anchor;                      // "": the first user message
  std::uint64_t reanchor_max_bytes = 2000;

  // --- Recall (F27; docs/design.md §Recall): every notice a cut leaves
  // names what it hid by a handle (and line range), and the request carries
  // the tokendiet_recall tool, answered from the client's own history.
  // false: notices without handles, no tool (semantic mode's tombstones
  // still name their archive entries, read with GET /v1/tokendiet/archive).
  bool recall = true;
  // The loop's bounds: per round,
  // at most recall_max_calls tokendiet_recall calls are answered (a repeat
  // of one in the same round once), each answer at most
  // recall_max_answer_bytes (cut at a line, the rest named by its range).
  std::uint32_t recall_max_calls = 4;
  std::uint64_t recall_max_answer_bytes = 16384;
  // What a recall makes stick (pruning/recalled_lines.hpp; docs/design.md
  // §Recall, "Recalled lines stay"): from the session's next frontier step
  // on, the cut of the recalled text keeps visible "answered" the lines the
  // answer showed, "output" every line of that text; "off" nothing (the
  // default: on the charged replay a kept range costs more than the rounds
  // it spares, docs/benchmarks.md §Recalled lines stay).
  std::string recalled_lines = "off";
  bool recalled_lines_kept() const { return recall && recalled_lines != "off"; }

  template <class Visitor>
  void visit(Visitor&& v) {
    v("models", models);
    v("enabled", enabled);
    v("shadow", shadow);
    v("control_fraction", control_fraction);
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
    v("max_loss", max_loss);
    v("exclude_tools", exclude_tools);
    v("old_thinking", old_thinking);
    v("old_thinking_keep_last_messages", old_thinking_keep_last_messages);
    v("identical_tool_calls", identical_tool_calls);
    v("identical_tool_calls_min_bytes", identical_tool_calls_min_bytes);
    v("identical_tool_outputs", identical_tool_outputs);
    v("identical_tool_outputs_min_bytes", identical_tool_outputs_min_bytes);
    v("identical_tool_outputs_wrapper_lines", identical_tool_outputs_wrapper_lines);
    v("identical_tool_outputs_wrapper_tags", identical_tool_outputs_wrapper_tags);
    v("similar_tool_outputs", similar_tool_outputs);
    v("similar_tool_outputs_min_bytes", similar_tool_outputs_min_bytes);
    v("similar_tool_outputs_min_shared", similar_tool_outputs_min_shared);
    v("similar_tool_outputs_max_edits", similar_tool_outputs_max_edits);
    v("similar_tool_outputs_min_saving_bytes", similar_tool_outputs_min_saving_bytes);
    v("low_entropy", low_entropy);
    v("low_entropy_min_run", low_entropy_min_run);
    v("low_entropy_blob_min_bytes", low_entropy_blob_min_bytes);
    v("low_entropy_names", low_entropy_names);
    v("stale_tool_outputs", stale_tool_outputs);
    v("stale_tool_outputs_threshold_bytes", stale_tool_outputs_threshold_bytes);
    v("stale_tool_outputs_head_bytes", stale_tool_outputs_head_bytes);
    v("stale_tool_outputs_tail_bytes", stale_tool_outputs_tail_bytes);
    v("stale_tool_outputs_error_lines", stale_tool_outputs_error_lines);
    v("stale_tool_outputs_names", stale_tool_outputs_names);
    v("stale_tool_outputs_keep_reads_bytes", stale_tool_outputs_keep_reads_bytes);
    v("stale_tool_outputs_keep_reads_revisited", stale_tool_outputs_keep_reads_revisited);
    v("stale_tool_outputs_keep_reads_dedupe", stale_tool_outputs_keep_reads_dedupe);
    v("stale_tool_outputs_read_outline", stale_tool_outputs_read_outline);
    v("stale_tool_outputs_keep_reads_dedupe_run_bytes", stale_tool_outputs_keep_reads_dedupe_run_bytes);
    v("stale_tool_outputs_keep_reads_dedupe_line_chars", stale_tool_outputs_keep_reads_dedupe_line_chars);
    v("stale_tool_outputs_keep_edited_turns", stale_tool_outputs_keep_edited_turns);
    v("stale_tool_outputs_keep_fresh_reads_turns", stale_tool_outputs_keep_fresh_reads_turns);
    v("stale_tool_outputs_keep_fresh_reads_bytes", stale_tool_outputs_keep_fresh_reads_bytes);
    v("stale_tool_outputs_held_reads_bytes", stale_tool_outputs_held_reads_bytes);
    v("stale_tool_outputs_keep_edited_copies", stale_tool_outputs_keep_edited_copies);
    v("stale_tool_outputs_saved_markers", stale_tool_outputs_saved_markers);
    v("stale_tool_outputs_truncated_markers", stale_tool_outputs_truncated_markers);
    v("stale_tool_outputs_min_saving_bytes", stale_tool_outputs_min_saving_bytes);
    v("stale_assistant_text", stale_assistant_text);
    v("stale_assistant_text_prose", stale_assistant_text_prose);
    v("stale_assistant_text_tool_arguments", stale_assistant_text_tool_arguments);
    v("stale_assistant_text_threshold_bytes", stale_assistant_text_threshold_bytes);
    v("stale_assistant_text_head_bytes", stale_assistant_text_head_bytes);
    v("stale_assistant_text_tail_bytes", stale_assistant_text_tail_bytes);
    v("stale_assistant_text_names", stale_assistant_text_names);
    v("stale_assistant_text_min_saving_bytes", stale_assistant_text_min_saving_bytes);
    v("stale_assistant_text_copied_line_bytes", stale_assistant_text_copied_line_bytes);
    v("trim_middle", trim_middle);
    v("trim_middle_sink_messages", trim_middle_sink_messages);
    v("trim_middle_recent_messages", trim_middle_recent_messages);
    v("trim_middle_budget_tokens", trim_middle_budget_tokens);
    v("recap", recap);
    v("token_threshold", token_threshold);
    v("recap_budget_tokens", recap_budget_tokens);
    v("recap_text_bytes", recap_text_bytes);
    v("recap_items", recap_items);
    v("completed_tasks", completed_tasks);
    v("semantic_threshold", semantic_threshold);
    v("completed_tasks_min_output_bytes", completed_tasks_min_output_bytes);
    v("completed_tasks_arguments_bytes", completed_tasks_arguments_bytes);
    v("completed_tasks_title_bytes", completed_tasks_title_bytes);
    v("completed_tasks_tools", completed_tasks_tools);
    v("tpm_limit", tpm_limit);
    v("itpm_limit", itpm_limit);
    v("otpm_limit", otpm_limit);
    v("quota_window_ms", quota_window_ms);
    v("quota_group", quota_group);
    v("anonymous_clients", anonymous_clients);
    v("survival", survival);
    v("quota_margin", quota_margin);
    v("max_wait_ms", max_wait_ms);
    v("min_turns", min_turns);
    v("thinking_budget", thinking_budget);
    v("thinking_budget_runway_tokens", thinking_budget_runway_tokens);
    v("thinking_budget_runway_fraction", thinking_budget_runway_fraction);
    v("thinking_budget_effort", thinking_budget_effort);
    v("thinking_budget_gemini_tokens", thinking_budget_gemini_tokens);
    v("thinking_budget_anthropic_tokens", thinking_budget_anthropic_tokens);
    v("client_compaction", client_compaction);
    v("client_compaction_patterns", client_compaction_patterns);
    v("client_compaction_patterns_without_tools", client_compaction_patterns_without_tools);
    v("recovery", recovery);
    v("context_window", context_window);
    v("recovery_margin", recovery_margin);
    v("recovery_note", recovery_note);
    v("reanchor_after_compression", reanchor_after_compression);
    v("reanchor_every_turns", reanchor_every_turns);
    v("anchor", anchor);
    v("reanchor_max_bytes", reanchor_max_bytes);
    v("recall", recall);
    v("recall_max_calls", recall_max_calls);
    v("recall_max_answer_bytes", recall_max_answer_bytes);
    v("recalled_lines", recalled_lines);
  }
};

}  // namespace td::pruning
