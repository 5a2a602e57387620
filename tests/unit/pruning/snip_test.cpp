#include <doctest/doctest.h>

#include <cstdio>

#include "pruning/snip.hpp"
#include "pruning_support.hpp"

using namespace td::pruning;
using namespace td::pruning::test;

namespace {
bool valid_utf8(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    unsigned char c = s[i];
    std::size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + len > s.size()) return false;
    for (std::size_t k = 1; k < len; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    i += len;
  }
  return true;
}
}  // namespace

TEST_CASE("snip_text: whole lines from head and tail, the middle counted in a notice") {
  std::string text = numbered_lines(200, "line");  // 200 lines of ~29 bytes
  std::string out = snip_text(text, {1024, 1024, 8, 0});
  CHECK(out.size() < text.size());
  CHECK(out.rfind("line 0 ", 0) == 0);
  CHECK(out.find("line 199 ") != std::string::npos);
  // Every kept line is a whole original line; the notice says what is missing.
  auto first_gap = out.find("[… ");
  REQUIRE(first_gap != std::string::npos);
  std::string head = out.substr(0, first_gap);
  CHECK(text.rfind(head, 0) == 0);
  CHECK(head.back() == '\n');
  std::size_t hidden_lines = 0;
  REQUIRE(std::sscanf(out.c_str() + first_gap, "[… %zu lines hidden]", &hidden_lines) == 1);
  std::string tail = out.substr(out.find(" lines hidden]\n") + 15);
  auto count_lines = [](const std::string& s) { return std::size_t(std::count(s.begin(), s.end(), '\n')); };
  CHECK(count_lines(head) + hidden_lines + count_lines(tail) == 200);
  CHECK(text.substr(text.size() - tail.size()) == tail);
  CHECK(head.size() <= 1024);
  CHECK(tail.size() <= 1024);
}

TEST_CASE("snip_text: error lines of the middle are kept, in order") {
  std::string text = numbered_lines(100, "ok") + "src/app.py:12: error: name 'x' is not defined\n" +
                     numbered_lines(50, "ok") + "Traceback (most recent call last):\n" + numbered_lines(100, "ok");
  std::string out = snip_text(text, {512, 512, 8, 0});
  auto e1 = out.find("src/app.py:12: error: name 'x' is not defined\n");
  auto e2 = out.find("Traceback (most recent call last):\n");
  REQUIRE(e1 != std::string::npos);
  REQUIRE(e2 != std::string::npos);
  CHECK(e1 < e2);
  CHECK(out.size() < text.size() / 2);
  // With no error lines allowed, they go too.
  CHECK(snip_text(text, {512, 512, 0, 0}).find("Traceback") == std::string::npos);
}

TEST_CASE("snip_text: one long line is cut inside, never inside a UTF-8 character") {
  std::string text;
  for (int i = 0; i < 3000; ++i) text += "é€😀";  // 2, 3 and 4 bytes
  for (std::uint64_t head : {1000, 1001, 1002, 1003}) {
    std::string out = snip_text(text, {head, head + 1, 8, 16});
    CHECK(out.size() < text.size());
    CHECK(valid_utf8(out));
  }
}

TEST_CASE("snip_text: text the cut would not shrink is returned as is") {
  std::string small = numbered_lines(10, "x");
  CHECK(snip_text(small, {1024, 1024, 8, 16}) == small);
}

TEST_CASE("snip_text: the names the hidden lines mention are listed once, unless kept anyway") {
  std::string text = "header src/app.py\n";
  for (int i = 0; i < 50; ++i) text += "plain words here and there\n";
  text += "calls parse_args in lib/util.py at 0.91506 and src/app.py\n";
  text += "calls parse_args again\n";
  for (int i = 0; i < 50; ++i) text += "more plain words follow\n";
  text += "footer done\n";
  std::string out = snip_text(text, {20, 12, 0, 16});
  CHECK(out.find("[hidden names: parse_args lib/util.py 0.91506]\n") != std::string::npos);
  // The kept head already says src/app.py; nothing is listed twice.
  CHECK(out.find("src/app.py") == out.rfind("src/app.py"));
  CHECK(out.rfind("header src/app.py\n", 0) == 0);
  CHECK(out.size() >= 12);
  CHECK(out.substr(out.size() - 12) == "footer done\n");
  // At most max_names; none with 0.
  CHECK(snip_text(text, {20, 12, 0, 1}).find("[hidden names: parse_args]") != std::string::npos);
  CHECK(snip_text(text, {20, 12, 0, 0}).find("names in") == std::string::npos);
}

TEST_CASE("names_in: paths, identifiers, numbers and codes; not plain words") {
  auto names = names_in("see src/foo.py:12, then run_tests (E1234 x) at 3.14159; words only; abc_de ok-ok");
  std::vector<std::string> got(names.begin(), names.end());
  CHECK(got == std::vector<std::string>{"src/foo.py:12", "run_tests", "3.14159", "abc_de"});
  // A sentence's full stop and a label's colon are not part of a name: a
  // plain word before one is no name, a path keeps the rest.
  auto punctuated = names_in("The key is absent. Claude: see docs/HOOKS.md:19: and config.yaml. Then stop..");
  std::vector<std::string> rest(punctuated.begin(), punctuated.end());
  CHECK(rest == std::vector<std::string>{"docs/HOOKS.md:19", "config.yaml"});
}

TEST_CASE("render: a name listed earlier in the request is not listed again") {
  std::string text = "head\n";
  for (int i = 0; i < 30; ++i) text += "line mentioning src/mod_" + std::to_string(i % 3) + ".py\n";
  text += "tail\n";
  Snipped s = snip(text, {8, 8, 0, 16});
  REQUIRE(s.cut);
  NameSet listed{"src/mod_1.py"};
  std::vector<std::string_view> used;
  std::string out = render(s, 16, &listed, &used);
  CHECK(out.find("[hidden names: src/mod_0.py src/mod_2.py]\n") != std::string::npos);
  CHECK(used == std::vector<std::string_view>{"src/mod_0.py", "src/mod_2.py"});
  // Everything listed already: no names line at all.
  listed.insert(used.begin(), used.end());
  CHECK(render(s, 16, &listed).find("names in") == std::string::npos);
  // Inside a JSON string the line ends with the two characters \n.
  CHECK(render(s, 16, nullptr, nullptr, true).find("src/mod_2.py]\\n") != std::string::npos);
}

TEST_CASE("NameSet: inserts once, finds what it holds, through growth") {
  std::vector<std::string> names;
  for (int i = 0; i < 1000; ++i) names.push_back("src/mod_" + std::to_string(i) + ".py");
  NameSet set;
  CHECK_FALSE(set.contains("src/mod_0.py"));
  for (int i = 0; i < 1000; i += 2) CHECK(set.insert(names[i]));
  for (int i = 0; i < 1000; i += 2) CHECK_FALSE(set.insert(std::string(names[i])));  // equal text, other storage
  CHECK(set.size() == 500);
  for (int i = 0; i < 1000; ++i) CHECK(set.contains(names[i]) == (i % 2 == 0));
  CHECK_FALSE(set.contains(""));
  CHECK(set.insert(""));
  CHECK(set.contains(""));
}

TEST_CASE("snip_text: head and tail go to informative lines, past prompts, progress meters and wrappers") {
  std::string text =
      "  % Total    % Received % Xferd  Average Speed   Time    Time     Time  Current\n"
      "                                 Dload  Upload   Total   Spent    Left  Speed\n"
      "100  5120  100  5120    0     0  51200      0 --:--:-- --:--:-- --:--:-- 51200\n"
      "\n"
      "def parse_config(path):\n";
  for (int i = 0; i < 40; ++i)
    text += "    value_" + std::to_string(i) + " = read_entry(path, " + std::to_string(i) + ")\n";
  text += "    return values\n\n(Open file: /repo/src/config.py)\n(Current directory: /repo)\nbash-$";
  SnipOptions o;
  o.head_bytes = 48;
  o.tail_bytes = 48;
  const std::string out = snip_text(text, o);
  CHECK(out.find("def parse_config(path):\n") != std::string::npos);
  CHECK(out.find("    return values\n") != std::string::npos);
  CHECK(out.find("% Total") == std::string::npos);
  CHECK(out.find("bash-$") == std::string::npos);
  CHECK(out.size() < text.size());
  CHECK(is_boilerplate_line("bash-$"));
  CHECK(is_boilerplate_line("root@4f2a:/repo# \n"));
  CHECK(is_boilerplate_line("<returncode>0</returncode>\n"));
  CHECK(is_boilerplate_line("---------------\n"));
  CHECK_FALSE(is_boilerplate_line("def parse_config(path):\n"));
  CHECK_FALSE(is_boilerplate_line("src/app.py:12: error: bad\n"));
}

TEST_CASE("names_in: JSON escapes separate names like what they stand for") {
  auto names = names_in(R"(a\n2026-11-20T10:00:01.001Z\t\"src/app.py\"\\x\u00e9build_42 C:\\tmp\\file_1.txt)");
  std::vector<std::string> got(names.begin(), names.end());
  CHECK(got == std::vector<std::string>{"2026-11-20T10:00:01.001Z", "src/app.py", "build_42", "file_1.txt"});
}

TEST_CASE("snip_text: a line cut inside is cut at a space, and its pieces are counted as pieces") {
  std::string line;
  for (int i = 0; i < 40; ++i) line += "word" + std::to_string(i) + " ";
  line += "end";
  const std::string text = "first line\n" + line + "\nlast line\n";
  // Head and tail keep whole lines; the long middle line is a whole line.
  CHECK(snip_text(text, {12, 12, 0, 0}).find("[… 1 line hidden]") != std::string::npos);
  // One long line alone: cut inside, between words.
  const std::string out = snip_text(line, {30, 30, 0, 0});
  const std::size_t gap = out.find("\n[… ");
  REQUIRE(gap != std::string::npos);
  CHECK(line[gap] == ' ');  // the head is a run of whole words
  const std::string tail = out.substr(out.find(" bytes hidden]\n") + 15);
  CHECK(out.find("\n[… " + std::to_string(line.size() - gap - tail.size()) + " bytes hidden]\n") != std::string::npos);
  CHECK(line[line.size() - tail.size() - 1] == ' ');
  // With lines around it, the pieces and the whole lines are told apart.
  const std::string mixed = line + "\n" + numbered_lines(3, "x") + line;
  const std::string m = snip_text(mixed, {30, 30, 0, 0});
  CHECK(m.find("[… 3 lines and parts of 2 hidden]") != std::string::npos);
  // A line with no space in reach is still cut, on a character boundary.
  const std::string blob(500, 'a');
  CHECK(snip_text(blob, {30, 30, 0, 0}).size() < blob.size());
}
