// Completed tasks, semantic mode's eviction (F14; docs/design.md §Policy,
// Semantic): once every task a tool output (or tool-call arguments of at
// least `completed_tasks_arguments_bytes`) belongs to is completed, it is
// replaced by a tombstone naming its archive entry:
//   [task "fix the parser" completed: output archived as td-3f9c…, 14,210 tokens; tokendiet_recall can read it back]
// (arguments: {"tombstone":"<that text>"}, so they stay a JSON object).
// completed_tasks_plan() decides which, on the history as sent and as a pure
// function of it (the session's requests replayed, under the frontier's
// payback rule and the loss cap); completed_tasks() places them on the
// pruned forms. Which task owns what: pruning/tasks.hpp.
// Reports: hits = tombstones, bytes_saved = text bytes removed net of them;
// the evicted texts, for the archive.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pruning/archived_output.hpp"
#include "pruning/conversation.hpp"
#include "pruning/held_forms.hpp"
#include "pruning/strategies/edited_files.hpp"
#include "pruning/step_cost.hpp"
#include "pruning/profile.hpp"
#include "pruning/strategy_options.hpp"
#include "pruning/tasks.hpp"
#include "pruning/strategies/working_memory.hpp"
#include "pruning/strategy_stats.hpp"
#include "pruning/token_counter.hpp"

namespace td::pruning {

// The profile fields it reads (pruning/strategy_options.hpp).
// clang-format off
#define TD_COMPLETED_TASKS_OPTIONS(X) \
  X(completed_tasks) \
  X(semantic_threshold) \
  X(completed_tasks_min_output_bytes) \
  X(completed_tasks_arguments_bytes) \
  X(completed_tasks_title_bytes) \
  TD_TASK_TOOLS_OPTIONS(X) \
  X(exclude_tools) \
  X(min_turns) \
  TD_WORKING_MEMORY_OPTIONS(X) \
  TD_STEP_COST_OPTIONS(X)
// clang-format on
TD_STRATEGY_OPTIONS(CompletedTasksOptions, TD_COMPLETED_TASKS_OPTIONS);

// One tombstone to place.
struct Tombstone {
  std::uint32_t message = 0;
  std::uint32_t part = 0;  // its index in the message as the client sent it
  PartKind kind = PartKind::ToolResult;
  std::string id;    // the part's call id (how it is found again in the pruned message)
  std::string text;  // what replaces the part's text
  ArchivedOutput archived;
  bool placed_now = false;  // placed at this request (a step: the task is restated after it)
};

// What the diet without semantic mode sends, request by request
// (pipeline.cpp): what a tombstone saves, and what a step costs, is measured
// against it (a stale output the frontier already cut saves less).
struct DietWithout {
  std::vector<std::uint32_t> ends;               // each request's end (loss_cap.hpp), the last: this request
  std::vector<std::uint32_t> frontier;           // parallel: the stale frontier each left (plan forms before it)
  std::vector<std::uint64_t> planned;            // per message: tokens in the plan's form (as sent where unchanged)
  std::vector<std::uint32_t> changed;            // ascending: the messages the plan changes
  const std::vector<Message>* pruned = nullptr;  // their plan forms, parallel to `changed`
  HeldForms held;                                // reads sent whole until the frontier releases them
};

// Decides on `conv` as the client sent it (`tokens`: count_tokens()'s per
// message) which parts become tombstones. Pure (`task_calls`, may be null:
// the memo of the task tools' calls, track_tasks(); `writes`, may be null:
// of the calls that write a file, writes_a_file()).
std::vector<Tombstone> completed_tasks_plan(const Conversation& conv, const CompletedTasksOptions& opt,
                                            const std::vector<std::uint64_t>& tokens, const WorkingMemory& wm,
                                            const DietWithout& without, const TokenCounter& counter,
                                            Memo<TaskCallFacts>* task_calls = nullptr,
                                            Memo<CallWrites>* writes = nullptr);

// Puts the tombstones into `conv` (its messages may be pruned forms by now:
// a part is found by its kind and call id), reports them, and appends what
// they replaced to `archived`.
StrategyStats completed_tasks(Conversation& conv, std::vector<Tombstone> tombstones,
                              std::vector<ArchivedOutput>* archived);

// The tombstone of `text` for the task `title`.
std::string tombstone_text(std::string_view title, std::string_view id, std::uint64_t tokens);

}  // namespace td::pruning
