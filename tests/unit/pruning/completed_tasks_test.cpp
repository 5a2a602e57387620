// Semantic eviction (pruning/strategies/completed_tasks.hpp) through the
// pipeline: what goes, what stays, the tombstone's text, the archive's text,
// byte stability as the history grows, the cost gate, and the switch.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>

#include "pruning/pipeline.hpp"
#include "pruning/strategies/completed_tasks.hpp"
#include "pruning_support.hpp"

namespace td::pruning {
namespace {

using namespace test;

std::string todos(std::initializer_list<std::pair<const char*, const char*>> items) {
  std::string s = R"({"todos":[)";
  bool first = true;
  for (auto [content, status] : items) {
    if (!first) s += ',';
    first = false;
    s += std::string(R"({"content":")") + content + R"(","status":")" + status + R"(","activeForm":"x"})";
  }
  return s + "]}";
}

// A distinct output of about `bytes` bytes.
std::string output(const std::string& tag, int bytes) {
  std::string s;
  for (int i = 0; static_cast<int>(s.size()) < bytes; ++i) s += tag + " line " + std::to_string(i) + " of output\n";
  s.resize(bytes);
  return s;
}

// Builds an agent session step by step.
struct Session {
  Conversation c;
  int calls = 0;
  Session() {
    c.messages.push_back(system_msg("You are an agent."));
    c.messages.push_back(user_msg("Fix the parser, then run the tests."));
  }
  // A tool call and its result; returns the result's message index.
  std::uint32_t run(const std::string& out, std::string args = R"({"command":"x"})") {
    const std::string id = "c" + std::to_string(calls++);
    c.messages.push_back(assistant_call(id, std::move(args)));
    c.messages.push_back(tool_msg(id, out));
    return static_cast<std::uint32_t>(c.messages.size() - 1);
  }
  std::uint32_t todo(const std::string& args) {
    const std::string id = "t" + std::to_string(calls++);
    c.messages.push_back(assistant_call(id, args, "", "TodoWrite"));
    c.messages.push_back(tool_msg(id, "Todos have been modified successfully."));
    return static_cast<std::uint32_t>(c.messages.size() - 2);
  }
};

Profile semantic_only() {
  Profile p;
  p.semantic_threshold = 2000;
  p.completed_tasks_min_output_bytes = 256;  // the small outputs of these sessions
  p.trigger_tokens = 1u << 30;               // the stale frontier never moves: only semantic mode acts
  // A short test session is bet on as if it ran as long again (the default
  // bets on 0.4 of the turns it had).
  p.payback_turn_fraction = 1;
  p.max_loss = 1;  // and a short session's loss cap is loose (tested on its own below)
  return p;
}

PipelineResult run(Conversation& c, const Profile& p) {
  QuarterCounter counter;
  const Counted counted = count_tokens(c, counter);
  return run_pipeline(c, counted, decide(counted, p), counter);
}

Conversation prefix(const Conversation& c, std::size_t n) {
  Conversation p = c;
  p.messages.resize(n);
  return p;
}

bool is_tombstone(const Part& p) { return p.text.find("tokendiet_recall can read it back") != std::string::npos; }

// Parser task (two big outputs, one before any task), then a tests task with
// `tail` more steps.
struct Scenario {
  Session s;
  std::uint32_t before_task = 0, parser_a = 0, parser_b = 0, completed_at = 0, tests_first = 0;
  std::string parser_a_text;
  explicit Scenario(int tail = 12) {
    before_task = s.run(output("ls", 3000));
    s.todo(todos({{"Fix the parser", "in_progress"}, {"Run the tests", "pending"}}));
    parser_a_text = output("parser-a", 4000);
    parser_a = s.run(parser_a_text);
    parser_b = s.run(output("parser-b", 4000));
    completed_at = s.todo(todos({{"Fix the parser", "completed"}, {"Run the tests", "in_progress"}}));
    tests_first = s.run(output("tests", 3000));
    for (int k = 0; k < tail; ++k) s.run(output("t" + std::to_string(k), 300));
  }
};

}  // namespace

TEST_CASE("completed_tasks: a completed task's outputs become tombstones; the rest stays") {
  Scenario sc;
  Conversation c = sc.s.c;
  const Conversation sent = c;
  const PipelineResult r = run(c, semantic_only());
  REQUIRE(r.archived.size() == 2);
  CHECK(std::find(r.fired.begin(), r.fired.end(), std::string_view("completed_tasks")) != r.fired.end());
  CHECK(is_tombstone(c.messages[sc.parser_a].parts[0]));
  CHECK(is_tombstone(c.messages[sc.parser_b].parts[0]));
  CHECK_FALSE(is_tombstone(c.messages[sc.before_task].parts[0]));  // before any task: never
  CHECK_FALSE(is_tombstone(c.messages[sc.tests_first].parts[0]));  // a task still in progress
  CHECK(c.messages[sc.completed_at].parts[1].text == sent.messages[sc.completed_at].parts[1].text);
  // The archive holds exactly what the tombstone replaced, byte for byte.
  CHECK(r.archived[0].text == sc.parser_a_text);
  CHECK(r.archived[0].id == archive_id(sc.parser_a_text));
  CHECK(r.archived[0].task == "Fix the parser");
  CHECK(r.archived[0].tokens == QuarterCounter().count(sc.parser_a_text));
  CHECK(c.messages[sc.parser_a].parts[0].text == "[task \"Fix the parser\" completed: output archived as " +
                                                     r.archived[0].id +
                                                     ", 1,000 tokens; "
                                                     "tokendiet_recall can read it back]");
  CHECK(r.tokens_after < r.tokens_before);
  // Every other message as it came.
  for (std::size_t i = 0; i < c.messages.size(); ++i)
    if (i != sc.parser_a && i != sc.parser_b) CHECK(render(c.messages[i]) == render(sent.messages[i]));
}

TEST_CASE("completed_tasks: the archive id is td- and 32 lowercase hex digits, content-addressed") {
  const std::string id = archive_id("hello");
  CHECK(id.size() == 35);
  CHECK(id.rfind("td-", 0) == 0);
  CHECK(id.find_first_not_of("0123456789abcdef", 3) == std::string::npos);
  CHECK(archive_id("hello") == id);
  CHECK(archive_id("hello!") != id);
  CHECK(archive_id("") == "td-99aa06d3014798d86001c324468d497f");  // XXH3-128 of nothing, high word first
}

// Completes `task` (another in progress), adds 12 small steps after it, and
// runs the pipeline over a low semantic threshold on a copy of the history.
PipelineResult finish_and_run(Session& s, const char* task, Conversation* c) {
  s.todo(todos({{task, "completed"}, {"Next", "in_progress"}}));
  for (int k = 0; k < 12; ++k) s.run(output("n" + std::to_string(k), 300));
  Profile p = semantic_only();
  p.semantic_threshold = 1000;
  *c = s.c;
  return run(*c, p);
}

TEST_CASE("completed_tasks: big tool-call arguments go too, as a JSON object") {
  Session s;
  s.todo(todos({{"Write the file", "in_progress"}}));
  const std::string big = R"({"command":"python3 - <<'EOF'\n)" + std::string(6000, 'x') + R"(\nEOF"})";
  const std::uint32_t result = s.run("written", big);
  Conversation c;
  const PipelineResult r = finish_and_run(s, "Write the file", &c);
  REQUIRE(r.archived.size() == 1);
  CHECK(r.archived[0].text == big);
  const Part& args = c.messages[result - 1].parts[1];
  CHECK(args.text.rfind(R"({"tombstone":"[task \"Write the file\" completed: output archived as td-)", 0) == 0);
  CHECK(c.messages[result].parts[0].text == "written");  // small output: stays
}

TEST_CASE("completed_tasks: the arguments of a call that writes a file stay") {
  // A later task's edits quote the lines the agent wrote (docs/design.md
  // §Policy, Semantic): Claude Code's Write, a patch, a shell redirect.
  Session s;
  s.todo(todos({{"Write the files", "in_progress"}}));
  const std::string body(6000, 'x');
  const std::string write = R"({"file_path":"/repo/src/a.py","content":")" + body + R"("})";
  const std::string patch = R"({"input":"*** Begin Patch\n*** Add File: src/b.py\n+)" + body + R"(\n*** End Patch"})";
  const std::string redirect = R"({"command":"cat > src/c.py <<'EOF'\n)" + body + R"(\nEOF"})";
  s.c.messages.push_back(assistant_call("w", write, "", "Write"));
  s.c.messages.push_back(tool_msg("w", "File created successfully at: /repo/src/a.py"));
  s.c.messages.push_back(assistant_call("p", patch, "", "apply_patch"));
  s.c.messages.push_back(tool_msg("p", "Success. Updated the following files:\nA src/b.py"));
  s.run("done", redirect);
  const std::string script = R"({"command":"python3 - <<'EOF'\n)" + body + R"(\nEOF"})";
  s.run("ran", script);  // a script the agent ran, no file written: it goes
  Conversation c;
  const PipelineResult r = finish_and_run(s, "Write the files", &c);
  REQUIRE(r.archived.size() == 1);
  CHECK(r.archived[0].text == script);
  for (const std::string& kept : {write, patch, redirect}) {
    const bool found = std::any_of(c.messages.begin(), c.messages.end(), [&](const Message& m) {
      return std::any_of(m.parts.begin(), m.parts.end(), [&](const Part& part) { return part.text == kept; });
    });
    CHECK(found);
  }
}

TEST_CASE("completed_tasks: the working-memory window and short histories stay") {
  Scenario near(0);  // the completion is in the last turns
  Conversation c = near.s.c;
  CHECK(run(c, semantic_only()).archived.empty());
  Scenario sc;
  Profile high = semantic_only();
  high.semantic_threshold = 1u << 30;
  c = sc.s.c;
  CHECK(run(c, high).archived.empty());
  Profile off = semantic_only();
  off.completed_tasks = false;  // the switch the archive's fail-open re-run uses
  c = sc.s.c;
  const PipelineResult r = run(c, off);
  CHECK(r.archived.empty());
  CHECK(render(c) == render(sc.s.c));
}

TEST_CASE("completed_tasks: several tasks in progress: evicted only once all are completed") {
  Session s;
  s.todo(todos({{"A", "in_progress"}, {"B", "in_progress"}}));
  const std::string shared_text = output("shared", 4000);
  const std::uint32_t shared = s.run(shared_text);
  s.todo(todos({{"A", "completed"}, {"B", "in_progress"}}));
  for (int k = 0; k < 12; ++k) s.run(output("b" + std::to_string(k), 300));
  Conversation c = s.c;
  CHECK(run(c, semantic_only()).archived.empty());  // B is still in progress
  s.todo(todos({{"A", "completed"}, {"B", "completed"}}));
  for (int k = 0; k < 12; ++k) s.run(output("c" + std::to_string(k), 300));
  c = s.c;
  const PipelineResult r = run(c, semantic_only());
  auto entry = std::find_if(r.archived.begin(), r.archived.end(),
                            [&](const ArchivedOutput& a) { return a.text == shared_text; });
  REQUIRE(entry != r.archived.end());
  CHECK(entry->task == "A; B");
  CHECK(is_tombstone(c.messages[shared].parts[0]));
}

TEST_CASE("completed_tasks: a task completed then reopened: placed tombstones stay, the rest waits") {
  Scenario sc;
  Session& s = sc.s;
  // Reopened after its outputs were evicted; a new output of it.
  s.todo(todos({{"Fix the parser", "in_progress"}, {"Run the tests", "pending"}}));
  const std::uint32_t again = s.run(output("parser-c", 4000));
  for (int k = 0; k < 12; ++k) s.run(output("r" + std::to_string(k), 300));
  Conversation c = s.c;
  const PipelineResult r = run(c, semantic_only());
  CHECK(is_tombstone(c.messages[sc.parser_a].parts[0]));  // placed before the reopening: stays
  CHECK_FALSE(is_tombstone(c.messages[again].parts[0]));  // the reopened task is not completed
  CHECK(r.archived.size() == 2);

  // Reopened before anything of it was evicted (the history was still
  // small then): nothing of it goes while it is open.
  Session t;
  t.todo(todos({{"A", "in_progress"}}));
  const std::uint32_t first = t.run(output("a1", 400));
  t.todo(todos({{"A", "completed"}}));
  t.todo(todos({{"A", "in_progress"}}));
  for (int k = 0; k < 14; ++k) t.run(output("a" + std::to_string(k + 2), 400));
  c = t.c;
  Profile p = semantic_only();
  p.completed_tasks_min_output_bytes = 100;
  p.semantic_threshold = 1500;  // crossed only after the reopening
  CHECK(run(c, p).archived.empty());
  t.todo(todos({{"A", "completed"}, {"B", "in_progress"}}));
  for (int k = 0; k < 12; ++k) t.run(output("b" + std::to_string(k), 400));
  c = t.c;
  const PipelineResult done = run(c, p);
  CHECK(is_tombstone(c.messages[first].parts[0]));  // completed again: both rounds go
  CHECK(done.archived.size() >= 2);
}

TEST_CASE("completed_tasks: byte-identical on every later request; the cache breaks only when tombstones are added") {
  Scenario sc(30);
  const Conversation& full = sc.s.c;
  std::vector<std::string> last;
  std::size_t last_archived = 0, steps = 0;
  for (std::size_t n = 3; n <= full.messages.size(); ++n) {
    if (n < full.messages.size() && full.messages[n].role != Role::Assistant) continue;  // a request ends here
    Conversation c = prefix(full, n);
    const PipelineResult r = run(c, semantic_only());
    const std::vector<std::string> now = render(c);
    bool prefix_kept = now.size() >= last.size() && std::equal(last.begin(), last.end(), now.begin());
    // A step is reported as such (the diet restates the task after it), and only a step.
    CHECK(r.semantic_stepped == (r.archived.size() != last_archived));
    if (r.archived.size() != last_archived)
      ++steps;
    else
      CHECK_MESSAGE(prefix_kept, "request of " << n << " messages rewrote its prefix without a new tombstone");
    CHECK(r.archived.size() >= last_archived);  // never taken back
    last = now;
    last_archived = r.archived.size();
  }
  CHECK(last_archived == 2);
  CHECK(steps == 1);  // both outputs in one step
}

TEST_CASE("completed_tasks: a step that does not pay for its cache rewrite is not taken") {
  Scenario sc;
  Profile p = semantic_only();
  p.payback_requests = 0;  // no request to pay it back
  Conversation c = sc.s.c;
  CHECK(run(c, p).archived.empty());
  p = semantic_only();
  p.max_loss = 0;  // the loss cap: the step's request would cost more than without
  p.payback_requests = 1000;
  p.payback_turn_fraction = 100;
  c = sc.s.c;
  CHECK(run(c, p).archived.empty());
}

TEST_CASE("completed_tasks: shadow reports, writes nothing, archives nothing; the mode says semantic") {
  Scenario sc;
  Profile p = semantic_only();
  p.shadow = true;
  Conversation c = sc.s.c;
  const PipelineResult r = run(c, p);
  CHECK(r.archived.empty());
  CHECK(r.tokens_after < r.tokens_before);
  CHECK(render(c) == render(sc.s.c));
  CHECK(reported_mode(Mode::Standard, true) == Mode::Semantic);
  CHECK(reported_mode(Mode::Standard, false) == Mode::Standard);
  CHECK(reported_mode(Mode::Survival, true) == Mode::Survival);
  CHECK(std::string(mode_name(Mode::Semantic)) == "semantic");
}

}  // namespace td::pruning

namespace td::pruning {

TEST_CASE("completed_tasks: an output the stale frontier already cut saves only what its cut form holds") {
  Scenario sc;
  Profile p = semantic_only();
  p.trigger_tokens = 0;  // the frontier moves too, as far as semantic mode may reach
  Conversation c = sc.s.c;
  const PipelineResult r = run(c, p);
  INFO("stale messages " << r.stale_messages << ", fired " << join_names(r.fired));
  CHECK(r.stale_messages > sc.parser_b);                       // the frontier passed the task's outputs ...
  CHECK(c.messages[sc.parser_a].parts[0].text.size() < 1000);  // ... and cut them (folded: their lines are alike)
  CHECK(r.archived.empty());  // a ~40-token cut form would save less than clear_at_least_tokens
  p.clear_at_least_tokens = 1;
  c = sc.s.c;
  const PipelineResult small = run(c, p);
  CHECK(small.archived.empty());  // still none: a cut form about its tombstone's size never pays for the rewrite
  CHECK(render(c) != render(sc.s.c));
}

}  // namespace td::pruning
