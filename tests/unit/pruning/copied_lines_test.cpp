#include <doctest/doctest.h>

#include <string>

#include "pruning/snip.hpp"
#include "pruning/strategies/copied_lines.hpp"
#include "pruning/strategies/stale_assistant_text.hpp"
#include "pruning_support.hpp"

using namespace td::pruning;
using namespace td::pruning::test;

namespace {
const std::string kLine = "    tau_s = np.where(costheta == 0, 0.0, tau_s)";
const std::string kOther = "    result = compute_the_other_thing(a, b)";

std::string file_read() {
  std::string s = "def physical(aoi, n=1.526):\n";
  for (int i = 0; i < 30; ++i) s += "    step_" + std::to_string(i) + " = helper_" + std::to_string(i) + "(aoi)\n";
  s += kLine + "\n" + kOther + "\n";
  for (int i = 0; i < 30; ++i) s += "    after_" + std::to_string(i) + " = more_" + std::to_string(i) + "(aoi)\n";
  return s + "    return iam\n";
}

// An edit quoting kLine, in the middle of a long script.
std::string edit_script(const std::string& quoted) {
  std::string s = "cat > fix.py << 'EOF'\nimport re\n";
  for (int i = 0; i < 30; ++i) s += "print('filler line number " + std::to_string(i) + " of the script')\n";
  s += quoted + "\n";
  for (int i = 0; i < 30; ++i) s += "print('more filler number " + std::to_string(i) + " of the script')\n";
  return s + "EOF\npython fix.py";
}

std::string args(const std::string& script) {
  std::string out = "{\"command\":\"";
  for (char c : script) {
    if (c == '\n')
      out += "\\n";
    else if (c == '"' || c == '\\')
      out += std::string("\\") + c;
    else
      out += c;
  }
  return out + "\"}";
}

Conversation session() {
  Conversation c;
  c.messages = {user_msg("fix the bug"),     assistant_call("c1", args("cat pvlib/iam.py")),
                tool_msg("c1", file_read()), assistant_call("c2", args(edit_script(kLine))),
                tool_msg("c2", "ok"),        assistant_call("c3", args(edit_script(kLine))),
                tool_msg("c3", "ok"),        assistant_msg("done")};
  return c;
}
}  // namespace

TEST_CASE("copied lines: a line of a tool output is kept by the first assistant message that copies it") {
  const Conversation c = session();
  const CopiedLines copied(c, 7, 20);
  const std::uint64_t key = copy_line_key(kLine, 20);
  CHECK(key != 0);
  const std::string script = edit_script(kLine);
  CHECK(copied.kept_by(script, 3) == std::vector<std::uint64_t>{key});
  CHECK(copied.kept_by(script, 5).empty());  // message 3 keeps it already
  CHECK(copied.keeps_any(3));
  CHECK_FALSE(copied.keeps_any(5));
  CHECK(copied.kept_by(line_text(c.messages[3].parts[1]), 3) == std::vector<std::uint64_t>{key});
  // A line no tool output held, a short one, or min_bytes 0: nothing.
  CHECK(copied.kept_by("    a_line_nobody_printed_before(x, y, z)\n", 3).empty());
  CHECK(copy_line_key("  return iam  ", 20) == 0);
  CHECK(CopiedLines(c, 7, 0).kept_by(script, 3).empty());
  // Only tool outputs before `limit` count.
  CHECK(CopiedLines(c, 2, 20).kept_by(script, 3).empty());
}

TEST_CASE("copied lines: stale assistant text keeps the copied line of a long script, once") {
  Profile p;
  Conversation c = session();
  const CopiedLines copied(c, 7, p.stale_assistant_text_copied_line_bytes);
  auto st = stale_assistant_text(c, p, 7, nullptr, copied);
  CHECK(st.hits == 2);
  CHECK(c.messages[3].parts[1].text.find("tau_s = np.where(costheta == 0, 0.0, tau_s)") != std::string::npos);
  CHECK(c.messages[3].parts[1].text.find("filler line number 15") == std::string::npos);
  // The second copy is cut like any script: the first one keeps the line.
  CHECK(c.messages[5].parts[1].text.find("tau_s = np.where") == std::string::npos);
  // Without the index (or with the key off), the line goes.
  Conversation plain = session();
  stale_assistant_text(plain, p, 7);
  CHECK(plain.messages[3].parts[1].text.find("tau_s = np.where") == std::string::npos);
}

TEST_CASE("snip: keep_lines keeps those middle lines, each gap with its notice") {
  std::string text;
  for (int i = 0; i < 40; ++i) text += "line number " + std::to_string(i) + " of a long output\n";
  const std::vector<std::uint64_t> keys = {copy_line_key("line number 20 of a long output", 20)};
  SnipOptions o{64, 64, 0, 0, &keys, 20};
  const std::string out = snip_text(text, o);
  CHECK(out.find("line number 20 of a long output\n") != std::string::npos);
  CHECK(out.find("line number 19 of") == std::string::npos);
  CHECK(out.find("line number 21 of") == std::string::npos);
  o.keep_lines = nullptr;
  CHECK(snip_text(text, o).find("line number 20 of") == std::string::npos);
}

TEST_CASE("copied lines: a message's cut does not change as the history grows") {
  Profile p;
  Conversation before = session();
  stale_assistant_text(before, p, 7, nullptr, CopiedLines(before, 7, p.stale_assistant_text_copied_line_bytes));
  // Later: the agent reads the file again and copies another of its lines.
  Conversation after = session();
  after.messages.push_back(assistant_call("c4", args("cat pvlib/iam.py")));
  after.messages.push_back(tool_msg("c4", file_read()));
  after.messages.push_back(assistant_call("c5", args(edit_script(kOther))));
  after.messages.push_back(tool_msg("c5", "ok"));
  after.messages.push_back(assistant_msg("done again"));
  const std::uint32_t limit = static_cast<std::uint32_t>(after.messages.size()) - 1;
  auto st = stale_assistant_text(after, p, limit, nullptr,
                                 CopiedLines(after, limit, p.stale_assistant_text_copied_line_bytes));
  for (std::size_t i = 0; i < 7; ++i) CHECK(render(after.messages[i]) == render(before.messages[i]));
  // The new copy keeps the line it is the first to copy.
  CHECK(after.messages[10].parts[1].text.find("compute_the_other_thing(a, b)") != std::string::npos);
  CHECK(st.hits == 3);
}

TEST_CASE("copied lines: a line copied from a numbered view or a diff, without its number or mark") {
  CHECK(copy_view("820:    def pre_save(self, model_instance, add):") ==
        "    def pre_save(self, model_instance, add):");
  CHECK(copy_view("821-        return super().pre_save(x)") == "        return super().pre_save(x)");
  CHECK(copy_view("django/db/models/base.py:730:    def save(self):") == "    def save(self):");
  CHECK(copy_view("    12\u2192import { join } from 'path';") == "import { join } from 'path';");
  CHECK(copy_view("    12\tint main(void) {") == "int main(void) {");
  CHECK(copy_view("+def _normalize_path(path: str) -> str:") == "def _normalize_path(path: str) -> str:");
  CHECK(copy_view("-    return os.path.abspath(path)") == "    return os.path.abspath(path)");
  // No number or mark: the line itself (a file header, a path with a space, a path's context line).
  for (std::string_view same :
       {"+++ b/astroid/modutils.py", "--- a/astroid/modutils.py", "return x  # 12: not a number",
        "see the notes: 12 of them", "src/a.py-12-    context line", "2024 was a year"})
    CHECK(copy_view(same) == same);

  const std::string copied = "        return super().pre_save(model_instance, add)";
  std::string grep = "70:# attname. For example, this gets the primary key value\n";
  grep += "820:    def pre_save(self, model_instance, add):\n";
  grep += "1704:" + copied + "\n";
  Conversation c;
  c.messages = {user_msg("fix the bug"), assistant_call("c1", args("grep -n pre_save fields/__init__.py")),
                tool_msg("c1", grep),    assistant_call("c2", args(edit_script(copied))),
                tool_msg("c2", "ok"),    assistant_msg("done")};
  const CopiedLines lines(c, 5, 20);
  CHECK(lines.kept_by(edit_script(copied), 3) == std::vector<std::uint64_t>{copy_line_key(copied, 20)});
}

TEST_CASE("copied lines: a line of an output sent as a JSON object (Codex's shell tool), decoded") {
  // Codex's shell tool: {"output":"…","metadata":{…}}, the file's lines escaped into one.
  const std::string command = args(file_read());  // {"command":"<the lines, escaped>"}
  const std::string json = "{\"output\"" + command.substr(10, command.size() - 11) + ",\"metadata\":{\"exit_code\":0}}";
  Conversation c;
  c.messages = {user_msg("fix the bug"),
                assistant_call("c1", args("sed -n '1,200p' pvlib/iam.py")),
                tool_msg("c1", "  " + json + "\n"),
                assistant_call("c2", args(edit_script(kLine))),
                tool_msg("c2", "ok"),
                assistant_msg("done")};
  CHECK(json_object_output(c.messages[2].parts[0]));
  CHECK(line_text(c.messages[2].parts[0]).find("\n" + kLine + "\n") != std::string::npos);
  const std::uint64_t key = copy_line_key(kLine, 20);
  CHECK(CopiedLines(c, 5, 20).kept_by(edit_script(kLine), 3) == std::vector<std::uint64_t>{key});
  // Not an object, or not one that parses: its text as sent, one line.
  c.messages[2].parts[0].text = "{\"output\":\"" + kLine + "\\n\"";  // cut short
  CHECK_FALSE(json_object_output(c.messages[2].parts[0]));
  c.messages[2].parts[0].text = "{ not json " + kLine + " }";
  CHECK(json_object_output(c.messages[2].parts[0]));
  CHECK(line_text(c.messages[2].parts[0]) == "{ not json " + kLine + " }");
}

TEST_CASE("copied lines: the memo of decoded arguments gives what decoding each call gives") {
  Profile p;
  const std::uint64_t bytes = p.stale_assistant_text_copied_line_bytes;
  Memo<std::string> decoded{std::size_t{1} << 20};
  // The same call ids with other arguments, twice over: the memo answers by the arguments.
  for (int round = 0; round < 2; ++round) {
    for (const std::string& quoted : {kLine, kOther}) {
      auto make = [&] {
        Conversation c = session();
        c.messages[3] = assistant_call("c2", args(edit_script(quoted)));
        return c;
      };
      Conversation with = make(), without = make();
      stale_assistant_text(with, p, 7, nullptr, CopiedLines(with, 7, bytes), &decoded);
      stale_assistant_text(without, p, 7, nullptr, CopiedLines(without, 7, bytes));
      INFO("round " << round << ", copying " << quoted);
      for (std::size_t i = 0; i < 7; ++i) CHECK(render(with.messages[i]) == render(without.messages[i]));
      CHECK(with.messages[3].parts[1].text.find(quoted) != std::string::npos);
    }
  }
  CHECK(decoded.hits() >= 2);
}
