// Task tracking (pruning/tasks.hpp): each watched tool's real argument
// shape (taken from the CLIs' own tool schemas: Claude Code 2.1.197's
// sdk-tools.d.ts and its TaskCreate result text, Codex's update_plan, Gemini
// CLI's write_todos, opencode's todowrite, Roo Code's update_todo_list, the
// seed's SigmaTaskUpdate), attribution, several tasks in progress, outputs
// before any task, and a task completed then reopened.
#include <doctest/doctest.h>

#include "pruning/tasks.hpp"
#include "pruning_support.hpp"

namespace td::pruning {
namespace {

using namespace test;

// A conversation: user task, then the given messages.
Conversation history(std::vector<Message> msgs) {
  Conversation c;
  c.messages.push_back(user_msg("do the work"));
  for (auto& m : msgs) c.messages.push_back(std::move(m));
  return c;
}

Message task_call(const std::string& id, const std::string& tool, const std::string& args) {
  return assistant_call(id, args, "", tool);
}

// The titles of the tasks an owned part belongs to.
std::vector<std::string> owners(const TaskHistory& h, std::uint32_t message) {
  std::vector<std::string> out;
  for (const TaskOwned& o : h.owned)
    if (o.message == message)
      for (std::uint32_t t : o.tasks) out.push_back(h.tasks[t].title);
  return out;
}

const TrackedTask* find(const TaskHistory& h, const std::string& title) {
  for (const TrackedTask& t : h.tasks)
    if (t.title == title) return &t;
  return nullptr;
}

}  // namespace

TEST_CASE("tasks: the default specs all parse; bad specs say why") {
  for (const std::string& spec : Profile{}.completed_tasks_tools) CHECK_MESSAGE(parse_task_tool(spec), spec);
  std::string why;
  CHECK_FALSE(parse_task_tool("", &why));
  CHECK_FALSE(parse_task_tool("TodoWrite list=todos text=/content status=/status", &why));
  CHECK(why.find("JSON pointer") != std::string::npos);
  CHECK_FALSE(parse_task_tool("TodoWrite list=/todos status=/status", &why));  // neither text nor id
  CHECK_FALSE(parse_task_tool("TaskUpdate id=/taskId", &why));                 // no status
  CHECK_FALSE(parse_task_tool("TodoWrite list=/todos colour=/x", &why));
  CHECK(why.find("unknown key") != std::string::npos);
  const auto t = parse_task_tool("write_todos list=/todos text=/description|/content status=/status");
  REQUIRE(t);
  CHECK(t->text == std::vector<std::string>{"/description", "/content"});
}

TEST_CASE("tasks: Claude Code TodoWrite: an output belongs to the task in progress when its call was made") {
  const std::string a_doing =
      R"({"todos":[{"content":"Fix the parser","status":"in_progress","activeForm":"Fixing the parser"},)"
      R"({"content":"Run the tests","status":"pending","activeForm":"Running the tests"}]})";
  const std::string b_doing =
      R"({"todos":[{"content":"Fix the parser","status":"completed","activeForm":"Fixing the parser"},)"
      R"({"content":"Run the tests","status":"in_progress","activeForm":"Running the tests"}]})";
  Conversation c = history({
      assistant_call("c0", R"({"command":"ls"})"), tool_msg("c0", "before any task"),                   // 1, 2
      task_call("t1", "TodoWrite", a_doing), tool_msg("t1", "Todos have been modified successfully."),  // 3, 4
      assistant_call("c1", R"({"command":"cat parser.c"})"), tool_msg("c1", "parser source"),           // 5, 6
      task_call("t2", "TodoWrite", b_doing), tool_msg("t2", "Todos have been modified successfully."),  // 7, 8
      assistant_call("c2", R"({"command":"make test"})"), tool_msg("c2", "tests pass"),                 // 9, 10
  });
  const TaskHistory h = track_tasks(c, Profile{});
  REQUIRE(h.tasks.size() == 2);
  CHECK(owners(h, 2).empty());                                        // before any task: no owner
  CHECK(owners(h, 4).empty());                                        // the task tool's own result
  CHECK(owners(h, 5) == std::vector<std::string>{"Fix the parser"});  // the call's arguments
  CHECK(owners(h, 6) == std::vector<std::string>{"Fix the parser"});
  CHECK(owners(h, 10) == std::vector<std::string>{"Run the tests"});
  const TrackedTask* parser = find(h, "Fix the parser");
  REQUIRE(parser);
  CHECK(parser->completed_after(5) == 7u);
  CHECK(parser->status_before(7) == TaskStatus::InProgress);
  CHECK(parser->status_before(8) == TaskStatus::Completed);
  CHECK_FALSE(find(h, "Run the tests")->completed_after(9));
}

TEST_CASE("tasks: Claude Code TaskCreate / TaskUpdate: ids from the result, status by id") {
  Conversation c = history({
      task_call("k1", "TaskCreate", R"({"subject":"Fix the parser","description":"the lexer chokes on tabs"})"),
      tool_msg("k1", "Task #1 created successfully: Fix the parser"),
      task_call("k2", "TaskUpdate", R"({"taskId":"1","status":"in_progress"})"),
      tool_msg("k2", "Updated task #1 status"),
      assistant_call("c1", R"({"command":"cat lexer.c"})"),
      tool_msg("c1", "lexer source"),  // 5, 6
      task_call("k3", "TaskUpdate", R"({"taskId":"1","status":"completed"})"),
      tool_msg("k3", "Updated task #1 status"),
  });
  const TaskHistory h = track_tasks(c, Profile{});
  REQUIRE(h.tasks.size() == 1);
  CHECK(h.tasks[0].title == "Fix the parser");
  CHECK(owners(h, 6) == std::vector<std::string>{"Fix the parser"});
  CHECK(h.tasks[0].completed_after(5) == 7u);
}

TEST_CASE("tasks: Codex update_plan, Gemini CLI write_todos, opencode todowrite, SigmaTaskUpdate") {
  struct Shape {
    std::string tool, doing, done;
  };
  const Shape shapes[] = {
      {"update_plan", R"({"explanation":"x","plan":[{"step":"Fix the parser","status":"in_progress"}]})",
       R"({"plan":[{"step":"Fix the parser","status":"completed"}]})"},
      {"write_todos", R"({"todos":[{"description":"Fix the parser","status":"in_progress"}]})",
       R"({"todos":[{"description":"Fix the parser","status":"completed"}]})"},
      {"write_todos", R"({"todos":[{"content":"Fix the parser","status":"in_progress"}]})",  // deepagents
       R"({"todos":[{"content":"Fix the parser","status":"completed"}]})"},
      {"todowrite", R"({"todos":[{"content":"Fix the parser","status":"in_progress","priority":"high"}]})",
       R"({"todos":[{"content":"Fix the parser","status":"completed","priority":"high"}]})"},
      {"SigmaTaskUpdate",
       R"({"todos":[{"id":"t-1","content":"Fix the parser","status":"in_progress","activeForm":"Fixing"}]})",
       R"j({"todos":[{"id":"t-1","content":"Fix the parser (done)","status":"completed","activeForm":"Fixing",)j"
       R"j("result_summary":"parser handles tabs now"}]})j"},
  };
  for (const Shape& s : shapes) {
    CAPTURE(s.tool);
    Conversation c = history({
        task_call("t1", s.tool, s.doing), tool_msg("t1", "ok"), assistant_call("c1", R"({"command":"cat parser.c"})"),
        tool_msg("c1", "parser source"),                        // 3, 4
        task_call("t2", s.tool, s.done), tool_msg("t2", "ok"),  // 5
    });
    const TaskHistory h = track_tasks(c, Profile{});
    REQUIRE(h.tasks.size() == 1);  // SigmaTaskUpdate: matched by id although its text changed
    CHECK(owners(h, 4).size() == 1);
    CHECK(h.tasks[0].completed_after(3) == 5u);
    CHECK(h.tasks[0].title_at(4) == "Fix the parser");  // renamed on completion (SigmaTaskUpdate): as of then
  }
}

TEST_CASE("tasks: Roo / Kilo update_todo_list: a markdown checklist") {
  Conversation c = history({
      task_call("t1", "update_todo_list", R"({"todos":"[x] Read the spec\n[-] Fix the parser\n[ ] Run the tests"})"),
      tool_msg("t1", "Todo list updated successfully."),
      assistant_call("c1", R"({"command":"cat parser.c"})"),
      tool_msg("c1", "parser source"),  // 3, 4
      task_call("t2", "update_todo_list", R"({"todos":"[x] Read the spec\n[x] Fix the parser\n[-] Run the tests"})"),
      tool_msg("t2", "Todo list updated successfully."),
  });
  const TaskHistory h = track_tasks(c, Profile{});
  CHECK(h.tasks.size() == 3);
  CHECK(owners(h, 4) == std::vector<std::string>{"Fix the parser"});
  CHECK(find(h, "Fix the parser")->completed_after(3) == 5u);
}

TEST_CASE("tasks: several in progress: the output belongs to all of them") {
  const std::string both =
      R"({"todos":[{"content":"A","status":"in_progress","activeForm":"a"},{"content":"B","status":"in_progress","activeForm":"b"}]})";
  Conversation c = history({
      task_call("t1", "TodoWrite", both), tool_msg("t1", "ok"), assistant_call("c1", R"({"command":"x"})"),
      tool_msg("c1", "shared output"),  // 3, 4
  });
  const TaskHistory h = track_tasks(c, Profile{});
  CHECK(owners(h, 4) == std::vector<std::string>{"A", "B"});
}

TEST_CASE("tasks: a call made in the same message after the task tool's update belongs to the new state") {
  const std::string doing = R"({"todos":[{"content":"A","status":"in_progress","activeForm":"a"}]})";
  Conversation c = history({msg(Role::Assistant, {call_part("c0", "bash", "{}"), call_part("t1", "TodoWrite", doing),
                                                  call_part("c1", "bash", "{}")}),
                            msg(Role::Tool, {result_part("c0", "zero")}), msg(Role::Tool, {result_part("t1", "ok")}),
                            msg(Role::Tool, {result_part("c1", "one")})});
  const TaskHistory h = track_tasks(c, Profile{});
  CHECK(owners(h, 2).empty());                           // c0: before the update
  CHECK(owners(h, 4) == std::vector<std::string>{"A"});  // c1: after it
}

TEST_CASE("tasks: a task dropped from the list is no longer in progress; one completed then reopened") {
  const std::string doing = R"({"todos":[{"content":"A","status":"in_progress","activeForm":"a"}]})";
  const std::string done = R"({"todos":[{"content":"A","status":"completed","activeForm":"a"}]})";
  Conversation c = history({
      task_call("t1", "TodoWrite", doing), tool_msg("t1", "ok"), task_call("t2", "TodoWrite", R"({"todos":[]})"),
      tool_msg("t2", "ok"),                                        // 3: dropped
      assistant_call("c1", "{}"), tool_msg("c1", "no task"),       // 5, 6
      task_call("t3", "TodoWrite", doing), tool_msg("t3", "ok"),   // 7
      assistant_call("c2", "{}"), tool_msg("c2", "first round"),   // 9, 10
      task_call("t4", "TodoWrite", done), tool_msg("t4", "ok"),    // 11
      task_call("t5", "TodoWrite", doing), tool_msg("t5", "ok"),   // 13: reopened
      assistant_call("c3", "{}"), tool_msg("c3", "second round"),  // 15, 16
  });
  const TaskHistory h = track_tasks(c, Profile{});
  REQUIRE(h.tasks.size() == 1);
  CHECK(owners(h, 6).empty());
  CHECK(owners(h, 10) == std::vector<std::string>{"A"});
  CHECK(owners(h, 16) == std::vector<std::string>{"A"});
  const TrackedTask& a = h.tasks[0];
  CHECK(a.status_before(12) == TaskStatus::Completed);
  CHECK(a.status_before(14) == TaskStatus::InProgress);
  CHECK(a.completed_after(9) == 11u);
  CHECK_FALSE(a.completed_after(15));  // the second round is not completed
}

TEST_CASE("tasks: arguments that are not JSON, or a tool not watched, track nothing") {
  Conversation c = history({task_call("t1", "TodoWrite", "not json"), tool_msg("t1", "ok"),
                            task_call("t2", "MyTodo", R"({"todos":[{"content":"A","status":"in_progress"}]})"),
                            tool_msg("t2", "ok"), assistant_call("c1", "{}"), tool_msg("c1", "x")});
  const TaskHistory h = track_tasks(c, Profile{});
  CHECK(h.tasks.empty());
  CHECK(h.owned.empty());
  Profile none;
  none.completed_tasks_tools.clear();
  CHECK(track_tasks(c, none).tasks.empty());
}

namespace {

// A history for the memo: every kind of watched tool, and the same call's
// text twice (a Codex session resends one plan, and the Single call names a
// task created before and after).
Conversation every_kind() {
  const std::string plan = R"({"plan":[{"step":"Fix the parser","status":"in_progress"}]})";
  return history({
      task_call("k1", "TaskCreate", R"({"subject":"Fix the lexer"})"),
      tool_msg("k1", "Task #1 created successfully"),
      task_call("k2", "TaskUpdate", R"({"taskId":"1","status":"in_progress"})"),
      tool_msg("k2", "ok"),
      task_call("k3", "TaskUpdate", R"({"taskId":"2","status":"in_progress"})"),
      tool_msg("k3", "ok"),
      task_call("p1", "update_plan", plan),
      tool_msg("p1", "Plan updated"),
      assistant_call("c1", R"({"command":"make"})"),
      tool_msg("c1", "built"),
      task_call("p2", "update_plan", plan),
      tool_msg("p2", "Plan updated"),
      task_call("r1", "update_todo_list", R"({"todos":"[-] Run the tests"})"),
      tool_msg("r1", "ok"),
      task_call("x1", "TodoWrite", "not json"),
      tool_msg("x1", "ok"),
      task_call("k4", "TaskUpdate", R"({"taskId":"1","status":"completed"})"),
      tool_msg("k4", "ok"),
      assistant_call("c2", R"({"command":"make test"})"),
      tool_msg("c2", "passed"),
  });
}

// Everything a TaskHistory says, as one string.
std::string described(const TaskHistory& h) {
  std::string out;
  for (const TrackedTask& t : h.tasks) {
    out += t.title + ":";
    for (const auto& x : t.titles) out += std::to_string(x.message) + "=" + x.title + ",";
    for (const auto& c : t.changes) out += std::to_string(c.message) + "/" + std::to_string(int(c.status)) + ",";
    out += ";";
  }
  for (const TaskOwned& o : h.owned) {
    out += std::to_string(o.message) + "." + std::to_string(o.part) + "<" + std::to_string(o.call_message) + ":";
    for (std::uint32_t t : o.tasks) out += std::to_string(t) + ",";
  }
  return out;
}

}  // namespace

TEST_CASE("tasks: through the calls' memo, cold and warm, the history is the same; the warm walk parses nothing") {
  const Conversation c = every_kind();
  const std::string plain = described(track_tasks(c, Profile{}));
  REQUIRE(plain.find("Fix the lexer") != std::string::npos);
  REQUIRE(plain.find("Run the tests") != std::string::npos);
  Memo<TaskCallFacts> memo(std::size_t{1} << 20);
  CHECK(described(track_tasks(c, Profile{}, &memo)) == plain);
  const std::uint64_t misses = memo.misses();
  CHECK(memo.hits() >= 1);  // the plan sent twice
  CHECK(described(track_tasks(c, Profile{}, &memo)) == plain);
  CHECK(memo.misses() == misses);  // the call that says nothing ("not json") included
}

}  // namespace td::pruning
