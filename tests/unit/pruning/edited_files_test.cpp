#include <doctest/doctest.h>

#include <algorithm>

#include "pruning/pipeline.hpp"
#include "pruning/strategies/edited_files.hpp"
#include "pruning_support.hpp"

using namespace td::pruning;
using namespace td::pruning::test;

namespace {

std::vector<std::string> paths(std::string_view name, std::string_view arguments) {
  std::vector<std::string> out;
  for (std::string_view p : edited_paths(name, arguments)) out.emplace_back(p);
  return out;
}
using Paths = std::vector<std::string>;

// system, user, then one (call, output) pair per command: a 40-line read of
// src/app.py first, then `commands[k]`, each answered with a short line.
Conversation editing_session(const std::vector<std::string>& commands, std::size_t read_lines = 40) {
  std::vector<std::string> all = {"cat src/app.py"};
  all.insert(all.end(), commands.begin(), commands.end());
  Conversation c = agent_loop(static_cast<int>(all.size()), [&](int k) {
    return k == 0 ? numbered_lines(static_cast<int>(read_lines), "    value = compute(x)") : std::string("ok\n");
  });
  for (std::size_t i = 0; i < all.size(); ++i) c.messages[2 + 2 * i].parts[1].text = "{\"command\":\"" + all[i] + "\"}";
  return c;
}

// `n` lines as Claude Code's Read shows a file: "     1→…".
std::string read_view(int n) {
  std::string s;
  for (int i = 1; i <= n; ++i)
    s += "     " + std::to_string(i) + "\u2192    value_" + std::to_string(i) + " = compute(x)\n";
  return s;
}

const std::string kEdit = "sed -i s/x/y/ src/app.py";
const std::string kOther = "python -m pytest tests/";

std::vector<std::string> repeat(const std::string& s, int n) { return std::vector<std::string>(n, s); }
std::vector<std::string> operator+(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Reads of files being edited held for `turns` turns after an edit, fresh
// reads of `fresh_bytes` or more for `fresh_turns` turns, within `bytes`.
Profile holding(std::uint32_t turns, std::uint64_t bytes = 65536, std::uint32_t fresh_turns = 0,
                std::uint64_t fresh_bytes = 1024) {
  Profile p;
  p.frontier_step_turns = 2;
  p.stale_tool_outputs_keep_edited_turns = turns;
  p.stale_tool_outputs_held_reads_bytes = bytes;
  p.stale_tool_outputs_keep_fresh_reads_turns = fresh_turns;
  p.stale_tool_outputs_keep_fresh_reads_bytes = fresh_bytes;
  return p;
}
Profile fresh(std::uint32_t turns) { return holding(0, 65536, turns); }

std::uint32_t all_of(const Conversation& c) { return static_cast<std::uint32_t>(c.messages.size()); }

}  // namespace

TEST_CASE("edited_paths: editing tools and commands that write a file") {
  CHECK(paths("Edit", R"({"file_path":"/repo/src/app.ts","old_string":"a","new_string":"b"})") ==
        Paths{"/repo/src/app.ts"});
  CHECK(paths("write_file", R"({"file_path":"src/app.ts","content":"x"})") == Paths{"src/app.ts"});
  CHECK(paths("str_replace_editor", R"({"command": "str_replace", "path": "/w/parser.c"})") == Paths{"/w/parser.c"});
  CHECK(paths("str_replace_editor", R"({"command": "view", "path": "/w/parser.c"})").empty());
  // Codex: the patch names its file; "(protected)" is no obstacle.
  CHECK(
      paths(
          "shell",
          R"({"command":["bash","-lc","apply_patch <<'PATCH'\n*** Begin Patch\n*** Update File: app/(p)/page.tsx\n@@\n-a\n+b\n*** End Patch\nPATCH"]})") ==
      Paths{"app/(p)/page.tsx"});
  CHECK(paths("bash",
              R"({"command":"cat > fix.patch << 'EOF'\n--- a/src/rules/L036.py\n+++ b/src/rules/L036.py\nEOF"})") ==
        Paths{"src/rules/L036.py"});
  CHECK(paths("bash", R"({"command":"sed -i 's/a/b/' src/app.py && python -m pytest tests/test_app.py"})") ==
        Paths{"src/app.py"});
  // A script written to a file edits that file, not the files its body names.
  CHECK(paths("bash", R"({"command":"cat > repro.py << 'EOF'\nopen('src/app.py').read()\nEOF"})") == Paths{"repro.py"});
  CHECK(paths("bash", R"({"command":"python -m pytest tests/test_app.py 2> /dev/null"})").empty());
  CHECK(paths("bash", R"({"command":"cat src/app.py"})").empty());
}

TEST_CASE("edited_file_holds: a read of a file being edited is held until its edits stop for the window") {
  // Turn 0 reads src/app.py; turns 1-5 edit it; then other work. Grid of 2 turns,
  // a window of 4: the last edit is in turn 5, so grid point 10 is the first
  // with no edit in the 4 turns before it.
  const Conversation c = editing_session(repeat(kEdit, 5) + repeat(kOther, 12));
  const ReadHolds holds = edited_file_holds(c, StaleToolOutputsOptions(holding(4)), all_of(c));
  CHECK(holds[3] == 10);
  for (std::size_t i = 4; i < holds.until.size(); ++i) CHECK(holds[i] == 0);
  // Off, or a read over the budget: not held.
  CHECK(edited_file_holds(c, StaleToolOutputsOptions(holding(0)), all_of(c))[3] == 0);
  CHECK(edited_file_holds(c, StaleToolOutputsOptions(holding(4, 100)), all_of(c))[3] == 0);
  // Seen only up to turn 8: still being edited as far as anyone can tell.
  CHECK(edited_file_holds(c, StaleToolOutputsOptions(holding(4)), 2 + 2 * 8)[3] == kHeldBeyond);
}

TEST_CASE("edited_file_holds: a read never edited, or read anew, is not held") {
  const Conversation untouched = editing_session(repeat(kOther, 16));
  CHECK(edited_file_holds(untouched, StaleToolOutputsOptions(holding(4)), all_of(untouched))[3] == 0);
  // Read again whole in turn 3: the older read goes at the first grid point after it.
  const Conversation reread = editing_session(repeat(kEdit, 2) + std::vector<std::string>{"cat src/app.py"} +
                                              repeat(kEdit, 3) + repeat(kOther, 10));
  const ReadHolds holds = edited_file_holds(reread, StaleToolOutputsOptions(holding(4)), all_of(reread));
  CHECK(holds[3] == 4);
  CHECK(holds[9] == 12);  // the newer read: edited up to turn 6
}

TEST_CASE("pipeline: a held read stays whole past the frontier, then is cut once, for good") {
  const Conversation full = editing_session(repeat(kEdit, 5) + repeat(kOther, 16), 200);
  Profile p = stepping_profile();  // steps every 2 turns, keeps 2
  p.stale_tool_outputs_keep_reads_bytes = 0;
  p.stale_tool_outputs_keep_edited_turns = 4;
  const std::string whole = render(full.messages[3]);
  std::string cut;
  bool held_past_frontier = false;
  for (std::size_t n = 4; n <= full.messages.size(); n += 2) {
    Conversation c = full;
    c.messages.resize(n);
    const PipelineResult r = prune(c, p, QuarterCounter{});
    const std::string now = render(c.messages[3]);
    if (r.stale_messages <= 3) {
      CHECK(now == whole);
      continue;
    }
    if (now == whole) {
      CHECK(cut.empty());  // never whole again once cut
      CHECK(r.stale_turns < 10);
      held_past_frontier = true;
    } else {
      CHECK(r.stale_turns >= 10);  // released: the frontier reached grid point 10
      if (cut.empty()) cut = now;
      CHECK(now == cut);  // the same cut in every later request
    }
  }
  CHECK(held_past_frontier);
  CHECK_FALSE(cut.empty());
}

TEST_CASE("edited_file_holds: with keep_edited_copies, copying a read's lines holds it like an edit") {
  // No edit: the agent quotes one line of the read in turns 1 and 3.
  Conversation c = editing_session(repeat(kOther, 16));
  const std::string read = c.messages[3].parts[0].text;
  std::vector<std::string> lines;
  for (std::size_t at = 0; at < read.size();) {
    const std::size_t nl = read.find('\n', at);
    lines.push_back(read.substr(at, nl - at));
    at = nl + 1;
  }
  for (int step : {1, 3}) c.messages[2 + 2 * step].parts[0].text = "the bug is here:\n" + lines[3];
  Profile p = holding(4);
  CHECK(edited_file_holds(c, StaleToolOutputsOptions(p), all_of(c))[3] == 0);
  p.stale_tool_outputs_keep_edited_copies = true;
  CHECK(edited_file_holds(c, StaleToolOutputsOptions(p), all_of(c))[3] == 8);  // last copy in turn 3
  // Claude Code's Read numbers its lines; an edit quotes them without.
  Conversation numbered = c;
  std::string shown;
  for (std::size_t i = 0; i < lines.size(); ++i) shown += "     " + std::to_string(i + 1) + "\u2192" + lines[i] + "\n";
  numbered.messages[3].parts[0].text = shown;
  CHECK(edited_file_holds(numbered, StaleToolOutputsOptions(p), all_of(numbered))[3] == 8);
  // Codex's shell tool sends the read as a JSON object, its lines escaped into one.
  Conversation wrapped = c;
  std::string escaped;
  for (const std::string& line : lines) escaped += line + "\\n";
  wrapped.messages[3].parts[0].text = "{\"output\":\"" + escaped + "\",\"metadata\":{\"exit_code\":0}}";
  CHECK(edited_file_holds(wrapped, StaleToolOutputsOptions(p), all_of(wrapped))[3] == 8);
}

TEST_CASE("edited_file_holds: a whole file just read as Claude Code's Read shows it is held for the fresh turns") {
  // Turn 0 reads src/app.py (200 numbered lines, about 6 KB), then other work.
  Conversation c = editing_session(repeat(kOther, 16));
  c.messages[3].parts[0].text = read_view(200);
  // Fresh for 4 turns: held at grid points 2 and 4, released at 6.
  CHECK(edited_file_holds(c, StaleToolOutputsOptions(fresh(4)), all_of(c))[3] == 6);
  CHECK(edited_file_holds(c, StaleToolOutputsOptions(fresh(8)), all_of(c))[3] == 10);
  // Off, under the size, over the budget: not held.
  CHECK(edited_file_holds(c, StaleToolOutputsOptions(fresh(0)), all_of(c))[3] == 0);
  CHECK(edited_file_holds(c, StaleToolOutputsOptions(holding(0, 65536, 4, 64 * 1024)), all_of(c))[3] == 0);
  CHECK(edited_file_holds(c, StaleToolOutputsOptions(holding(0, 1024, 4)), all_of(c))[3] == 0);
  // Claude Code 2.1.2xx numbers its Read "12<tab>", unpadded: fresh the same.
  Conversation tabbed = c;
  std::string tab_view;
  for (int i = 1; i <= 200; ++i) tab_view += std::to_string(i) + "\t    value_" + std::to_string(i) + " = compute(x)\n";
  tabbed.messages[3].parts[0].text = tab_view;
  CHECK(edited_file_holds(tabbed, StaleToolOutputsOptions(fresh(4)), all_of(tabbed))[3] == 6);
  // Numbered otherwise (`cat -n`, `grep -n`: mostly a view of one function), or a part of the file: not fresh.
  Conversation other = c;
  other.messages[3].parts[0].text = numbered_lines(200, "    value = compute(x)");
  CHECK(edited_file_holds(other, StaleToolOutputsOptions(fresh(4)), all_of(other))[3] == 0);
  Conversation part = c;
  part.messages[3].parts[0].text = read_view(400).substr(read_view(199).size());
  CHECK(edited_file_holds(part, StaleToolOutputsOptions(fresh(4)), all_of(part))[3] == 0);
  // Read anew in turn 1, before the first grid point: the older read is never held.
  Conversation reread = editing_session(std::vector<std::string>{"cat src/app.py"} + repeat(kOther, 16));
  reread.messages[3].parts[0].text = read_view(200);
  reread.messages[5].parts[0].text = read_view(200);
  const ReadHolds holds = edited_file_holds(reread, StaleToolOutputsOptions(fresh(4)), all_of(reread));
  CHECK(holds[3] == 0);
  CHECK(holds[5] == 6);
  // A fresh read that is then edited is held while either holds it: the
  // edits (last in turn 5, window 4) until 10, freshness (12 turns) until 14.
  Conversation edited = editing_session(repeat(kEdit, 5) + repeat(kOther, 12));
  edited.messages[3].parts[0].text = read_view(200);
  CHECK(edited_file_holds(edited, StaleToolOutputsOptions(holding(4, 65536, 4)), all_of(edited))[3] == 10);
  CHECK(edited_file_holds(edited, StaleToolOutputsOptions(holding(4, 65536, 12)), all_of(edited))[3] == 14);
}

TEST_CASE("edited_file_holds: a newer read over the budget's room releases the oldest held one") {
  // Turn 0 reads src/app.py, turn 3 src/other.py (about 6 KB each, numbered
  // as Claude Code's Read numbers them); the budget holds one of them.
  Conversation c = editing_session(std::vector<std::string>{kOther, kOther, "cat src/other.py"} + repeat(kOther, 16));
  c.messages[3].parts[0].text = read_view(200);
  c.messages[9].parts[0].text = read_view(200);
  REQUIRE(c.messages[3].parts[0].text.size() * 2 > 8192);
  const ReadHolds holds = edited_file_holds(c, StaleToolOutputsOptions(holding(0, 8192, 12)), all_of(c));
  // The newer read is held from its block's end (grid point 4) until it is
  // 12 turns old (released at 16); the older one makes room there.
  CHECK(holds[9] == 16);
  CHECK(holds[3] == 4);
  CHECK(holds.parts == std::vector<std::pair<std::uint32_t, std::uint32_t>>{{3, 0}, {9, 0}});
  // With room for both, each is held for its own fresh turns.
  const ReadHolds both = edited_file_holds(c, StaleToolOutputsOptions(holding(0, 65536, 12)), all_of(c));
  CHECK(both[3] == 14);
  CHECK(both[9] == 16);
}

TEST_CASE("pipeline: a fresh read held past the frontier counts from its release on, so that step pays") {
  // Turn 0 reads a 14 KB file; every later turn's output is small and saves
  // little when cut. A step must save 1500 tokens: the outputs alone reach
  // that only late, the read's release at grid point 8 at once, as weighed.
  Conversation full = editing_session(repeat(kOther, 24));
  full.messages[3].parts[0].text = read_view(400);
  for (std::size_t i = 5; i < full.messages.size(); i += 2) full.messages[i].parts[0].text = numbered_lines(12, "log");
  Profile p = stepping_profile();  // steps every 2 turns, keeps 2
  p.clear_at_least_tokens = 1500;
  p.stale_tool_outputs_keep_reads_bytes = 0;
  p.stale_tool_outputs_keep_fresh_reads_turns = 6;
  p.stale_tool_outputs_keep_fresh_reads_bytes = 1024;
  p.stale_tool_outputs_held_reads_bytes = 1 << 20;
  const std::string whole = render(full.messages[3]);
  std::string cut;
  std::uint32_t first_step = 0;
  for (std::size_t n = 4; n <= full.messages.size(); n += 2) {
    Conversation c = full;
    c.messages.resize(n);
    const PipelineResult r = prune(c, p, QuarterCounter{});
    const std::string now = render(c.messages[3]);
    if (r.stale_turns < 8) {
      CHECK(now == whole);  // not stale, or still fresh at the frontier's grid point
      continue;
    }
    if (first_step == 0) first_step = static_cast<std::uint32_t>(n);
    CHECK(now != whole);  // cut by the step that reaches its release, and ever after
    if (cut.empty()) cut = now;
    CHECK(now == cut);
  }
  // The first request that may step to grid point 8 (it holds 8 + 2 turns) does.
  CHECK(first_step == 2 + 2 * 11);
  CHECK_FALSE(cut.empty());
}

TEST_CASE("pipeline: while a read is held before the frontier, a second cache anchor sits just before it") {
  // A step that releases the read changes the history from the read on,
  // before the frontier's anchor: the prefix before the read is what the
  // earlier requests sent, and a breakpoint there finds it cached.
  Conversation full = editing_session(repeat(kOther, 24));
  full.messages[3].parts[0].text = read_view(400);
  Profile p = stepping_profile();  // steps every 2 turns, keeps 2
  p.stale_tool_outputs_keep_reads_bytes = 0;
  p.stale_tool_outputs_keep_fresh_reads_turns = 6;
  p.stale_tool_outputs_keep_fresh_reads_bytes = 1024;
  p.stale_tool_outputs_held_reads_bytes = 1 << 20;
  const std::string whole = render(full.messages[3]);
  std::uint32_t prev_stale = 0;
  std::string prev_before_read;
  int held_anchors = 0, releases = 0;
  for (std::size_t n = 4; n <= full.messages.size(); n += 2) {
    Conversation c = full;
    c.messages.resize(n);
    const PipelineResult r = prune(c, p, QuarterCounter{});
    std::vector<std::pair<std::size_t, int>> marked;  // message, rank
    for (std::size_t i = 0; i < c.messages.size(); ++i)
      for (const Part& part : c.messages[i].parts)
        if (part.cache_anchor) marked.emplace_back(i, part.cache_anchor);
    const bool held_before = prev_stale > 3 && render(c.messages[3]) == whole;
    const bool released_now = prev_stale > 3 && render(c.messages[3]) != whole && !prev_before_read.empty();
    INFO("request of " << n << " messages, frontier " << prev_stale << " -> " << r.stale_messages);
    if (held_before || released_now) {
      // The frontier's anchor and, before the read (in the call's message), the held read's.
      REQUIRE(marked.size() == 2);
      CHECK(marked[0] == std::pair<std::size_t, int>{2, 2});
      CHECK(marked[1] == std::pair<std::size_t, int>{prev_stale - 1, 1});
      ++held_anchors;
      std::string before_read;
      for (std::size_t i = 0; i < 3; ++i) before_read += render(c.messages[i]);
      if (!prev_before_read.empty()) CHECK(before_read == prev_before_read);  // cached as sent
      prev_before_read = released_now ? std::string{} : before_read;
      releases += released_now;
    } else if (prev_stale > 0) {
      REQUIRE(marked.size() == 1);  // the frontier's alone
      CHECK(marked[0].second == 1);
    }
    prev_stale = r.stale_messages;
  }
  CHECK(held_anchors >= 2);
  CHECK(releases == 1);
}

namespace {

// Claude Code's shape: turn 0 Reads four files at once and their results
// come back in one message (3): a whole 400-line file first, then three
// 120-line ones; every later turn runs a command with a short output.
Conversation parallel_reads(int later_turns) {
  Conversation c;
  c.messages.push_back(system_msg("You are a helpful assistant."));
  c.messages.push_back(user_msg("Fix the bug in src/app.py"));
  Message calls = msg(Role::Assistant, {text_part("let me read them")});
  Message results = msg(Role::User, {});
  for (int k = 0; k < 4; ++k) {
    const std::string id = "read_" + std::to_string(k);
    calls.parts.push_back(call_part(id, "Read", "{\"file_path\":\"src/m" + std::to_string(k) + ".py\"}"));
    results.parts.push_back(result_part(id, k == 0 ? read_view(400) : numbered_lines(120, "    row")));
  }
  c.messages.push_back(std::move(calls));
  c.messages.push_back(std::move(results));
  for (int t = 1; t <= later_turns; ++t) {
    const std::string id = "call_" + std::to_string(t);
    c.messages.push_back(assistant_call(id, "{\"command\":\"" + kOther + "\"}"));
    c.messages.push_back(tool_msg(id, "ok\n"));
  }
  for (std::size_t i = 0; i < c.messages.size(); ++i) {
    c.messages[i].origin = static_cast<std::uint32_t>(i);
    for (std::size_t j = 0; j < c.messages[i].parts.size(); ++j)
      c.messages[i].parts[j].origin = static_cast<std::uint32_t>(j);
  }
  return c;
}

}  // namespace

TEST_CASE("edited_file_holds: each of a message's results is a read of its own, held within the budget alone") {
  const Conversation c = parallel_reads(16);
  const std::size_t whole = c.messages[3].parts[0].text.size();
  const std::size_t all = whole + 3 * c.messages[3].parts[1].text.size();
  REQUIRE(all > 20000);
  REQUIRE(whole < 16384);
  // Fresh from 8 KB for 6 turns within 16 KB: the large read alone is held
  // (the four together are over the budget), until grid point 8.
  const ReadHolds holds = edited_file_holds(c, StaleToolOutputsOptions(holding(0, 16384, 6, 8192)), all_of(c));
  CHECK(holds[3] == 8);
  CHECK(holds.parts == std::vector<std::pair<std::uint32_t, std::uint32_t>>{{3, 0}});
  // A budget under the large read: nothing held.
  CHECK(edited_file_holds(c, StaleToolOutputsOptions(holding(0, 8192, 6, 8192)), all_of(c))[3] == 0);
}

TEST_CASE("pipeline: a read held among parallel results stays whole while the others are cut") {
  const Conversation full = parallel_reads(24);
  Profile p = stepping_profile();  // steps every 2 turns, keeps 2
  p.stale_tool_outputs_keep_reads_bytes = 0;
  p.stale_tool_outputs_keep_fresh_reads_turns = 6;
  p.stale_tool_outputs_keep_fresh_reads_bytes = 8192;
  p.stale_tool_outputs_held_reads_bytes = 16384;
  const Message& sent_whole = full.messages[3];
  int held = 0, released = 0;
  std::string cut;
  for (std::size_t n = 6; n <= full.messages.size(); n += 2) {
    Conversation c = full;
    c.messages.resize(n);
    const PipelineResult r = prune(c, p, QuarterCounter{});
    if (r.stale_messages <= 3) continue;
    INFO("request of " << n << " messages, frontier at turn " << r.stale_turns);
    const Message& m = c.messages[3];
    REQUIRE(m.parts.size() == 4);
    for (std::size_t j = 1; j < 4; ++j) CHECK(m.parts[j].text != sent_whole.parts[j].text);  // cut once stale
    if (r.stale_turns < 8) {
      CHECK(m.parts[0].text == sent_whole.parts[0].text);  // fresh: whole
      ++held;
    } else {
      CHECK(m.parts[0].text != sent_whole.parts[0].text);  // released: cut, the same ever after
      if (cut.empty()) cut = render(m);
      CHECK(render(m) == cut);
      ++released;
    }
  }
  CHECK(held >= 1);
  CHECK(released >= 1);
}

TEST_CASE("pipeline: a held read that no strategy cuts holds nothing: no anchor waits for its release") {
  // Read's results are never pruned (exclude_tools), the three results
  // beside the fresh Read are Grep's: the Read is held, but its message
  // sends the same before and after its release, and no second cache anchor
  // marks it (with the Read cut, one does).
  Conversation full = parallel_reads(24);
  for (int k = 1; k < 4; ++k) {
    full.messages[2].parts[1 + k].name = "Grep";
    full.messages[2].parts[1 + k].text = "{\"pattern\":\"value_" + std::to_string(k) + "\",\"path\":\"src\"}";
  }
  Profile p = stepping_profile();
  p.stale_tool_outputs_keep_reads_bytes = 0;
  p.stale_tool_outputs_keep_fresh_reads_turns = 6;
  p.stale_tool_outputs_keep_fresh_reads_bytes = 8192;
  p.stale_tool_outputs_held_reads_bytes = 16384;
  auto second_anchors = [&](const Profile& profile) {
    int n_marked = 0;
    for (std::size_t n = 6; n <= full.messages.size(); n += 2) {
      Conversation c = full;
      c.messages.resize(n);
      prune(c, profile, QuarterCounter{});
      for (const Message& m : c.messages)
        for (const Part& part : m.parts) n_marked += part.cache_anchor == 2;
    }
    return n_marked;
  };
  CHECK(second_anchors(p) >= 1);
  p.exclude_tools = {"Read"};
  CHECK(second_anchors(p) == 0);
}
