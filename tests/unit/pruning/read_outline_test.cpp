#include <doctest/doctest.h>

#include "pruning/strategies/read_outline.hpp"
#include "pruning/strategies/stale_tool_outputs.hpp"
#include "pruning_support.hpp"

using namespace td::pruning;
using namespace td::pruning::test;

namespace {

// A 120-line TypeScript file as Claude Code's Read shows it ("    12→"),
// with an import, a class and a method in its middle.
std::string read_output(std::string_view arrow = "\u2192") {
  std::string s;
  for (int i = 1; i <= 120; ++i) {
    std::string code = "    const value" + std::to_string(i) + " = compute(options, " + std::to_string(i) + ");";
    if (i == 50) code = "import { join } from 'path';";
    if (i == 60) code = "export class SessionOrchestrator {";
    if (i == 70) code = "  async beforeAgentSpawn(): Promise<void> {";
    std::string number = std::to_string(i);
    s += std::string(6 - number.size(), ' ') + number + std::string(arrow) + code + "\n";
  }
  return s;
}

std::uint32_t all(const Conversation& c) { return static_cast<std::uint32_t>(c.messages.size()); }

}  // namespace

TEST_CASE("is_outline_line: imports and declarations, not statements") {
  CHECK(is_outline_line("import { join } from 'path';"));
  CHECK(is_outline_line("from django.db import models"));
  CHECK(is_outline_line("  export interface SessionOrchestratorOptions {"));
  CHECK(is_outline_line("  private async syncSessions(): Promise<void> {"));
  CHECK(is_outline_line("    def save(self, *args):"));
  CHECK(is_outline_line("  constructor(options: Options) {"));
  CHECK_FALSE(is_outline_line("from the docs we know"));  // a "from" without an import
  CHECK_FALSE(is_outline_line("    const value = compute(options);"));
  CHECK_FALSE(is_outline_line("    sessionId: this.sessionId,"));
  CHECK_FALSE(is_outline_line(""));
}

TEST_CASE("read_outline: the declaration lines of a Read, none of another numbering") {
  CHECK(read_outline(read_output()).size() == 3);
  CHECK(read_outline(read_output(":")).empty());                           // grep -n: a part of a file
  CHECK(read_outline("import os\nclass A:\n    def f(self):\n").empty());  // not numbered
}

TEST_CASE("a stale Read's cut keeps its outline lines, by default") {
  Profile p;
  CHECK(p.stale_tool_outputs_read_outline);  // on by default
  p.stale_tool_outputs_keep_reads_bytes = 0;
  Conversation c = agent_loop(3, [](int k) { return k == 0 ? read_output() : std::string("ok\n"); });
  c.messages[2].parts[1].name = "Read";
  Conversation kept = c;
  stale_tool_outputs(kept, p, all(kept));
  const std::string& cut = kept.messages[3].parts[0].text;
  REQUIRE(cut.size() < c.messages[3].parts[0].text.size());  // cut
  CHECK(cut.find("    50\u2192import { join } from 'path';\n") != std::string::npos);
  CHECK(cut.find("    60\u2192export class SessionOrchestrator {\n") != std::string::npos);
  CHECK(cut.find("    70\u2192  async beforeAgentSpawn(): Promise<void> {\n") != std::string::npos);
  CHECK(cut.find("const value55 =") == std::string::npos);  // the statements between stay hidden

  p.stale_tool_outputs_read_outline = false;
  Conversation plain = c;
  stale_tool_outputs(plain, p, all(plain));
  CHECK(plain.messages[3].parts[0].text.find("SessionOrchestrator {") == std::string::npos);
}
