#include <doctest/doctest.h>

#include "pruning/snip.hpp"
#include "pruning/strategies/low_entropy.hpp"
#include "pruning_support.hpp"

using namespace td::pruning;
using namespace td::pruning::test;

TEST_CASE("fold_text: a run of identical lines keeps the first and counts the rest") {
  std::string text = "start\n";
  for (int i = 0; i < 42; ++i) text += "WARNING: deprecated call in module foo\n";
  text += "end\n";
  CHECK(fold_text(text, 4, 256) ==
        "start\nWARNING: deprecated call in module foo\n[… previous line repeated 41 more times]\nend\n");
}

TEST_CASE("fold_text: near-identical lines keep the first and the last") {
  std::string text;
  for (int i = 0; i <= 40; ++i) text += "Downloading package " + std::to_string(i * 10) + " kB\n";
  text += "done\n";
  std::string out = fold_text(text, 4, 256);
  CHECK(out == "Downloading package 0 kB\n[… 39 similar lines folded]\nDownloading package 400 kB\ndone\n");
}

TEST_CASE("fold_text: lines that differ in their words are never folded") {
  std::string text;
  for (int i = 0; i < 30; ++i)
    text += "tests/test_mod.py::test_case_" + std::string(1, char('a' + i % 26)) + std::to_string(i / 26) + " PASSED\n";
  // Same shape only where the letters agree: test_case_a0 .. test_case_z0 all differ.
  CHECK(fold_text(text, 4, 256) == text);
  std::string listing =
      "-rw-r--r-- 1 root root 185 Nov 22 2024 .deepsource.toml\n"
      "-rw-r--r-- 1 root root 386 Nov 22 2024 .editorconfig\n"
      "-rw-r--r-- 1 root root 383 Nov 22 2024 .gitattributes\n"
      "-rw-r--r-- 1 root root 585 Nov 22 2024 .gitignore\n";
  CHECK(fold_text(listing, 4, 256) == listing);
}

TEST_CASE("fold_text: runs shorter than the minimum stay") {
  std::string text = "same\nsame\nsame\nother\n";
  CHECK(fold_text(text, 4, 256) == text);
}

TEST_CASE("fold_text: carriage-return redraws keep the last drawing") {
  std::string text = "  0%|          | 0/100\r 50%|#####     | 50/100\r100%|##########| 100/100\nnext line\r\n";
  CHECK(fold_text(text, 4, 256) == "100%|##########| 100/100\nnext line\r\n");
}

TEST_CASE("fold_text: tqdm bars on their own lines fold as near-identical") {
  std::string text;  // U+2588 FULL BLOCK = E2 96 88
  for (int i = 0; i <= 10; ++i) {
    std::string bar;
    for (int k = 0; k < i; ++k) bar += "\xE2\x96\x88";
    text += "Epoch 1: " + std::to_string(i * 10) + "%|" + bar + "| " + std::to_string(i) + "/10\n";
  }
  std::string out = fold_text(text, 4, 256);
  CHECK(out.find("[… 9 similar lines folded]") != std::string::npos);
  CHECK(out.find("100%") != std::string::npos);
}

TEST_CASE("fold_text: base64 and hex blobs are folded, ordinary long words are not") {
  std::string b64;
  for (int i = 0; i < 100; ++i) b64 += "QUJDZGv5";  // 800 chars, mixed case and digits
  std::string hex(512, 'a');
  for (std::size_t i = 0; i < hex.size(); i += 3) hex[i] = '7';
  std::string text = "image: data:image/png;base64," + b64 + "==\nsha: " + hex + "\n";
  std::string out = fold_text(text, 4, 256);
  CHECK(out == "image: data:image/png;base64," + b64.substr(0, 16) +
                   "[… 802-byte base64 blob folded]\nsha: " + hex.substr(0, 16) + "[… 512-byte hex blob folded]\n");
  std::string path = "/" + std::string(300, 'a') + "/file.py\n";  // one case, no digits
  CHECK(fold_text(path, 4, 256) == path);
  std::string commit = "commit 3f2c1e9a7b5d4c2e1f0a9b8c7d6e5f4a3b2c1d0e\n";  // 40 hex: a reference, kept
  CHECK(fold_text(commit, 4, 256) == commit);
}

TEST_CASE("low entropy: only tool outputs before the limit are folded") {
  std::string noisy;
  for (int i = 0; i < 50; ++i) noisy += "retrying connection to db.example.com\n";
  auto c = agent_loop(3, [&](int) { return noisy; });
  c.messages.push_back(assistant_msg(noisy));
  c.messages.push_back(user_msg(noisy));
  auto st = low_entropy(c, Profile{}, 6);
  CHECK(st.hits == 2);
  CHECK(c.messages[3].parts[0].text.size() < noisy.size());
  CHECK(c.messages[5].parts[0].text.size() < noisy.size());
  CHECK(c.messages[7].parts[0].text == noisy);
  CHECK(low_entropy(c, Profile{}, 100).hits == 1);  // message 7; never 8 or 9
  CHECK(c.messages[8].parts[0].text == noisy);
  CHECK(c.messages[9].parts[0].text == noisy);
  Profile off;
  off.low_entropy = false;
  auto d = agent_loop(3, [&](int) { return noisy; });
  CHECK(low_entropy(d, off, 100).hits == 0);
}

TEST_CASE("fold_text: a fold names the distinct paths it hides") {
  std::string text = "checking\n";
  for (int i = 18; i <= 29; ++i)
    text += "ok src/sqlfluff/rules/L0" + std::to_string(i) + ".py passed in 0.0" + std::to_string(i % 10) + "s\n";
  text += "done\n";
  std::string out = fold_text(text, 4, 256);
  CHECK(out ==
        "checking\nok src/sqlfluff/rules/L018.py passed in 0.08s\n"
        "[… 10 similar lines folded, naming src/sqlfluff/rules/L019.py src/sqlfluff/rules/L020.py "
        "src/sqlfluff/rules/L021.py src/sqlfluff/rules/L022.py src/sqlfluff/rules/L023.py "
        "src/sqlfluff/rules/L024.py src/sqlfluff/rules/L025.py src/sqlfluff/rules/L026.py "
        "src/sqlfluff/rules/L027.py src/sqlfluff/rules/L028.py]\n"
        "ok src/sqlfluff/rules/L029.py passed in 0.09s\ndone\n");
  // More distinct paths than it may name: folded from where it can name them all, or not at all.
  CHECK(fold_text(text, 4, 256, 9).find("[… 9 similar lines folded, naming src/sqlfluff/rules/L020.py") !=
        std::string::npos);
  CHECK(fold_text(text, 4, 256, 1) == text);
  // Lines that differ only in numbers that are no paths fold without names.
  std::string counts;
  for (int i = 0; i < 8; ++i) counts += "Downloading 12345" + std::to_string(i) + " bytes\n";
  CHECK(fold_text(counts, 4, 256) ==
        "Downloading 123450 bytes\n[… 6 similar lines folded]\nDownloading 123457 bytes\n");
}

TEST_CASE("is_path_name: a slash or a file extension") {
  CHECK(is_path_name("src/app.py"));
  CHECK(is_path_name("L018.py"));
  CHECK(is_path_name("Cargo.toml"));
  CHECK_FALSE(is_path_name("3.14159"));
  CHECK_FALSE(is_path_name("2026-11-20T10:00:01.001Z"));
  CHECK_FALSE(is_path_name("parse_args"));
}
