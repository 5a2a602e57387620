// Task tracking from the history (F14; docs/design.md §Policy, Semantic):
// which tasks an agent declared through its task tools, when each was in
// progress and completed, and which tool outputs (and tool-call arguments)
// belong to which task. Pure: a function of the conversation and the
// profile's `completed_tasks_tools` only.
//
// A watched tool is described by one spec string (config/tokendiet.example.yaml):
//   "<tool name> key=value ..."   keys:
//     list=/ptr        the arguments hold the whole task list at this JSON
//                      pointer (RFC 6901): TodoWrite, update_plan, write_todos,
//                      todowrite, SigmaTaskUpdate. Each item is matched across
//                      calls by its id (id=) when the spec names one, else by
//                      its text; a task of a list tool missing from a newer
//                      list is no longer in progress.
//     checklist=/ptr   the list is one markdown checklist string ("[ ] a",
//                      "[-] b" in progress, "[x] c" done): Roo/Kilo update_todo_list.
//     text=/p|/q       an item's text (or, without list=, the call's task
//                      title): the first pointer that holds a string.
//     status=/ptr      an item's (or the call's) status: "completed",
//                      "in_progress"; anything else (pending, cancelled,
//                      deleted) is neither.
//     id=/ptr          an item's id (list tools), or, without list=, the id of
//                      the one task the call updates (TaskUpdate).
//     id_after=#       without list= and id=: the call creates a task whose id
//                      is the run of non-blank characters after this text in
//                      its tool result ("Task #3 created successfully": TaskCreate).
//
// Which task owns a call and its output: docs/design.md §Policy, Semantic
// ("What belongs to a task").
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pruning/conversation.hpp"
#include "pruning/memo.hpp"
#include "pruning/profile.hpp"
#include "pruning/strategy_options.hpp"

namespace td::pruning {

struct TaskTool {
  enum class Kind : std::uint8_t { List, Checklist, Single, Create };
  std::string name;
  Kind kind = Kind::Single;
  std::string list;               // list= or checklist= pointer
  std::vector<std::string> text;  // text= alternatives
  std::string status, id, id_after;
};

// Parses one spec; nullopt with `*error` set when it is not valid.
std::optional<TaskTool> parse_task_tool(std::string_view spec, std::string* error = nullptr);

enum class TaskStatus : std::uint8_t { Other, InProgress, Completed };

struct TrackedTask {
  std::string title;  // the latest one
  // Each title it had, with the message of the call that gave it.
  struct Titled {
    std::uint32_t message;
    std::string title;
  };
  std::vector<Titled> titles;
  // Each status change, in history order: the message of the call that made it.
  struct Change {
    std::uint32_t message;
    TaskStatus status;
  };
  std::vector<Change> changes;

  // The status the history [0, end) left it in.
  TaskStatus status_before(std::uint32_t end) const;
  // Its title as of message `message` (a tombstone names the task as it was
  // when completed, so a later rename never changes a tombstone already sent).
  const std::string& title_at(std::uint32_t message) const;
  // The message of its first completion after message `after` (nullopt: none).
  std::optional<std::uint32_t> completed_after(std::uint32_t after) const;
};

// A tool output or a tool call's arguments that belongs to tasks.
struct TaskOwned {
  std::uint32_t message = 0;
  std::uint32_t part = 0;                // index in Message::parts
  std::uint32_t call_message = 0;        // where its call was made (== message for arguments)
  std::span<const std::uint32_t> tasks;  // indices into TaskHistory::tasks, ascending (in task_sets)
};

// Move-only: `owned` views the sets in `task_sets`.
struct TaskHistory {
  TaskHistory() = default;
  TaskHistory(TaskHistory&&) = default;
  TaskHistory& operator=(TaskHistory&&) = default;
  TaskHistory(const TaskHistory&) = delete;
  TaskHistory& operator=(const TaskHistory&) = delete;

  std::vector<TrackedTask> tasks;
  std::vector<TaskOwned> owned;  // in history order
  // Each set of tasks in progress some owned part was made under, once (a
  // session's calls mostly share one; copying it into each cost an allocation).
  std::vector<std::vector<std::uint32_t>> task_sets;
};

// What one call of a watched tool says, read from its arguments once and
// remembered by its text (PipelineCaches::task_calls): a session resends
// every earlier call on each request.
struct TaskCallFacts {
  struct Item {
    std::string key, title;  // key: "id:…" or "text:…"
    TaskStatus status = TaskStatus::Other;
  };
  std::vector<Item> items;          // list and checklist tools: the list it holds
  std::string id;                   // a single-task tool: the task's id
  std::optional<std::string> text;  // a single-task or creating tool: the title it gives
  bool has_status = false;          // a single-task tool: the status is there
  TaskStatus status = TaskStatus::Other;
  std::size_t memo_bytes() const;
};

// Tracks the tasks of `conv` through the profile's completed_tasks_tools
// (specs that do not parse are skipped: config/load.cpp rejects them).
// The profile fields it reads (pruning/strategy_options.hpp).
// clang-format off
#define TD_TASK_TOOLS_OPTIONS(X) \
  X(completed_tasks_tools)
// clang-format on
TD_STRATEGY_OPTIONS(TaskToolsOptions, TD_TASK_TOOLS_OPTIONS);

// `calls` (may be null): the memo of the calls' facts.
TaskHistory track_tasks(const Conversation& conv, const TaskToolsOptions& opt, Memo<TaskCallFacts>* calls = nullptr);

}  // namespace td::pruning
