// What reaches the operator's terminal from client or file text: control
// characters made visible, printable text (UTF-8 included) untouched.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <filesystem>
#include <fstream>

#include "cli/input_path.hpp"
#include "cli/terminal_text.hpp"
#include "temp_dir.hpp"

using td::cli::path_problem;
using td::cli::PathKind;
using td::cli::terminal_json;
using td::cli::terminal_text;

TEST_CASE("terminal_text shows C0, DEL and escape sequences as \\xNN") {
  CHECK(terminal_text("\x1b]0;pwned\x07title\x1b[2J") == "\\x1b]0;pwned\\x07title\\x1b[2J");
  CHECK(terminal_text(std::string("a\0b", 3)) == "a\\x00b");
  CHECK(terminal_text("line\r\nnext\tx\x7f") == "line\\x0d\\x0anext\\x09x\\x7f");
  CHECK(terminal_text("line\r\nnext\tx", true) == "line\\x0d\nnext\tx");  // keep_lines: \n and \t only
}

TEST_CASE("terminal_text shows C1 and bidirectional controls as \\uNNNN, keeps printable UTF-8") {
  CHECK(terminal_text("a\xc2\x9b"
                      "2Jb") == "a\\u009b2Jb");  // U+009B CSI
  CHECK(terminal_text("\xc2\x85") == "\\u0085");
  CHECK(terminal_text("abc\xe2\x80\xae"
                      "fdp.exe") == "abc\\u202efdp.exe");  // RIGHT-TO-LEFT OVERRIDE
  CHECK(terminal_text("\xe2\x81\xa6x\xe2\x81\xa9") == "\\u2066x\\u2069");
  const std::string printable =
      "caf\xc3\xa9 \xe2\x98\x83 \xf0\x9f\x98\x80 \xc2\xa0 ok\\x1b";  // é ☃ 😀 NBSP, a backslash
  CHECK(terminal_text(printable) == printable);
}

TEST_CASE("terminal_text shows each byte of invalid UTF-8 as \\xNN") {
  CHECK(terminal_text("a\xff"
                      "b") == "a\\xffb");
  CHECK(terminal_text("\xc3") == "\\xc3");                             // truncated
  CHECK(terminal_text("\xc0\x9b") == "\\xc0\\x9b");                    // overlong (would be CSI's byte)
  CHECK(terminal_text("\xed\xa0\x80") == "\\xed\\xa0\\x80");           // surrogate
  CHECK(terminal_text("\xf4\x90\x80\x80") == "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
  CHECK(terminal_text("\xe2\x80") == "\\xe2\\x80");
}

TEST_CASE("terminal_json escapes the same characters the JSON way and parses to the same values") {
  const std::string json =
      "[\"a\x7f\",\"\xc2\x9b"
      "2J\",\"\xe2\x80\xae"
      "x\",\"caf\xc3\xa9\"]\n{\"k\":1}";
  const std::string safe = terminal_json(json);
  CHECK(safe == "[\"a\\u007f\",\"\\u009b2J\",\"\\u202ex\",\"caf\xc3\xa9\"]\n{\"k\":1}");
  rapidjson::Document a, b;
  a.Parse(json.c_str(), json.find('\n'));
  b.Parse(safe.c_str(), safe.find('\n'));
  REQUIRE_FALSE(a.HasParseError());
  REQUIRE_FALSE(b.HasParseError());
  CHECK(a == b);
  CHECK(terminal_json("[\"\xff\"]") == "[\"\\ufffd\"]");
}

TEST_CASE("path_problem: a path that is not there, or not of its kind, is named with the reason") {
  td::test::TempDir tmp;
  const std::string file = tmp.file("f.yaml");
  std::ofstream(file) << "x: 1\n";
  CHECK(path_problem(file, PathKind::file).empty());
  CHECK(path_problem(tmp.path(), PathKind::directory).empty());
  CHECK(path_problem(tmp.path() + "/none", PathKind::file) == tmp.path() + "/none: No such file or directory");
  CHECK(path_problem(tmp.path() + "/none", PathKind::directory) == tmp.path() + "/none: No such file or directory");
  CHECK(path_problem(tmp.path(), PathKind::file) == tmp.path() + ": is a directory");
  CHECK(path_problem(file, PathKind::directory) == file + ": not a directory");
  CHECK(path_problem(tmp.path() + "/\x1b[2J", PathKind::file) == tmp.path() + "/\\x1b[2J: No such file or directory");
}
