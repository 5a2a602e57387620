#!/usr/bin/env python3
"""Tests of convert.py: each input format's rules (tests/fixtures/replay/README.md,
"How each source was converted") on small made-up sessions, and the stats of
every committed fixture it wrote. Standard library only; a ctest test
(tests/CMakeLists.txt)."""

import glob
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, HERE)
import convert  # noqa: E402


def write(records, suffix=".jsonl"):
    f = tempfile.NamedTemporaryFile("w", suffix=suffix, delete=False, encoding="utf-8")
    if suffix == ".jsonl":
        f.write("".join(json.dumps(r) + "\n" for r in records))
    else:
        json.dump(records, f)
    f.close()
    return f.name


def codex(kind, **payload):
    return {"timestamp": "2026-01-01T00:00:00Z", "type": kind, "payload": payload}


def claude(kind, content, msg_id=None, **extra):
    message = {"role": kind, "content": content}
    if msg_id:
        message.update(id=msg_id, model="claude-x")
    return dict(type=kind, message=message, **extra)


class CodexRollout(unittest.TestCase):
    def test_responses_outputs_and_dropped_records(self):
        path = write([
            codex("session_meta", id="s", base_instructions={"text": "BASE"}),
            codex("response_item", type="message", role="developer", content=[{"type": "input_text", "text": "DEV"}]),
            codex("turn_context", model="gpt-x"),
            codex("response_item", type="message", role="user", content=[{"type": "input_text", "text": "do it"}]),
            codex("response_item", type="reasoning", encrypted_content="opaque"),
            codex("response_item", type="message", role="assistant", content=[{"type": "output_text", "text": "on it"}]),
            codex("response_item", type="function_call", name="exec_command", arguments='{"cmd":"ls"}', call_id="c1"),
            codex("response_item", type="function_call", name="exec_command", arguments='{"cmd":"pwd"}', call_id="c2"),
            codex("event_msg", type="token_count"),
            codex("response_item", type="function_call_output", call_id="c1", output="Total output lines: 9\n…"),
            codex("response_item", type="function_call_output", call_id="c2", output="/w"),
            codex("response_item", type="web_search_call", status="completed"),
            codex("response_item", type="custom_tool_call", name="apply_patch", input="*** Begin Patch", call_id="c3"),
            codex("event_msg", type="token_count"),
            codex("response_item", type="custom_tool_call_output", call_id="c3", output="Success"),
            codex("response_item", type="message", role="assistant", content=[{"type": "output_text", "text": "done"}]),
            codex("event_msg", type="token_count"),
            codex("compacted", message="", replacement_history=[]),
            codex("response_item", type="message", role="user", content=[{"type": "input_text", "text": "after"}]),
        ])
        model, msgs = convert.from_codex(path)
        self.assertEqual(model, "gpt-x")
        self.assertEqual([m["role"] for m in msgs],
                         ["system", "system", "user", "assistant", "tool", "tool", "assistant", "tool", "assistant"])
        self.assertEqual(msgs[0]["content"], "BASE")
        self.assertEqual(msgs[3]["content"], "on it")
        self.assertEqual([c["id"] for c in msgs[3]["tool_calls"]], ["c1", "c2"])
        self.assertEqual(msgs[4]["content"], "Total output lines: 9\n…")  # Codex's own truncation, verbatim
        self.assertEqual(msgs[6]["tool_calls"][0]["function"],
                         {"name": "apply_patch", "arguments": '{"input": "*** Begin Patch"}'})
        self.assertEqual(msgs[8]["content"], "done")  # nothing after the compaction

    def test_unanswered_call_is_an_error(self):
        path = write([
            codex("response_item", type="function_call", name="x", arguments="{}", call_id="c1"),
            codex("event_msg", type="token_count"),
            codex("response_item", type="message", role="user", content=[{"type": "input_text", "text": "?"}]),
            codex("response_item", type="message", role="assistant", content=[{"type": "output_text", "text": "!"}]),
        ])
        out = subprocess.run([sys.executable, os.path.join(HERE, "convert.py"), "codex", path, "--id", "x",
                              "--repo", "r", "--path", "p", "--commit", "c", "--license", "l"],
                             capture_output=True, text=True)
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("not answered", out.stderr)


class ClaudeCode(unittest.TestCase):
    def test_merge_by_message_id_and_compaction(self):
        path = write([
            claude("user", "fix it"),
            claude("assistant", [{"type": "thinking", "thinking": "hmm"}], "m1"),
            claude("assistant", [{"type": "text", "text": "reading"}], "m1"),
            claude("assistant", [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a"}}], "m1"),
            claude("user", [{"type": "tool_result", "tool_use_id": "t1",
                             "content": [{"type": "text", "text": "     1→x"}], "is_error": False}]),
            claude("assistant", [{"type": "tool_use", "id": "t2", "name": "Edit", "input": {"old_string": "x"}}], "m1"),
            claude("assistant", [{"type": "text", "text": "side"}], "m9", isSidechain=True),
            claude("user", [{"type": "tool_result", "tool_use_id": "t2", "content": "ok"}]),
            claude("assistant", [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}], "m2"),
            {"type": "system", "subtype": "compact_boundary"},
            claude("user", "after"),
        ])
        model, msgs = convert.from_claude_code(path)
        self.assertEqual(model, "claude-x")
        self.assertEqual([m["role"] for m in msgs], ["user", "assistant", "tool", "tool", "assistant"])
        first = msgs[1]
        self.assertEqual(first["content"], "reading")
        self.assertEqual(first["reasoning_content"], "hmm")
        self.assertEqual([c["id"] for c in first["tool_calls"]], ["t1", "t2"])
        self.assertEqual(first["tool_calls"][0]["function"]["arguments"], '{"file_path": "a"}')
        self.assertEqual(msgs[2], {"role": "tool", "content": "     1→x", "tool_call_id": "t1"})
        self.assertEqual(msgs[4]["content"], "a\n\nb")


class MiniSweAgent(unittest.TestCase):
    def test_bookkeeping_and_exit_dropped(self):
        path = write({"info": {"config": {"model": {"model_name": "deepseek/x"}}}, "messages": [
            {"role": "system", "content": "sys"},
            {"role": "assistant", "content": None, "extra": {}, "function_call": None, "provider_specific_fields": None,
             "tool_calls": [{"index": 0, "id": "c", "type": "function",
                             "function": {"name": "bash", "arguments": '{"command":"ls"}'}}]},
            {"role": "tool", "content": "out", "tool_call_id": "c", "extra": {}},
            {"role": "exit", "content": "diff"},
        ]}, suffix=".json")
        model, msgs = convert.from_mini_swe_agent(path)
        self.assertEqual(model, "deepseek/x")
        self.assertEqual(msgs, [
            {"role": "system", "content": "sys"},
            {"role": "assistant", "content": "",
             "tool_calls": [{"id": "c", "type": "function", "function": {"name": "bash", "arguments": '{"command":"ls"}'}}]},
            {"role": "tool", "content": "out", "tool_call_id": "c"},
        ])


class GeminiCli(unittest.TestCase):
    def test_calls_then_results(self):
        path = write({"messages": [
            {"type": "user", "content": "go"},
            {"type": "gemini", "content": "", "model": "gemini-x", "thoughts": [{"subject": "t"}], "toolCalls": [
                {"id": "g1", "name": "read_file", "args": {"path": "a"},
                 "result": [{"functionResponse": {"id": "g1", "response": {"output": "A"}}}]},
                {"id": "g2", "name": "run", "args": {},
                 "result": [{"functionResponse": {"id": "g2", "response": {"error": "boom"}}}]}]},
        ]}, suffix=".json")
        model, msgs = convert.from_gemini_cli(path)
        self.assertEqual(model, "gemini-x")
        self.assertEqual([m["role"] for m in msgs], ["user", "assistant", "tool", "tool"])
        self.assertEqual([m["content"] for m in msgs[2:]], ["A", "boom"])


class CommittedFixtures(unittest.TestCase):
    def test_stats_match_their_messages(self):
        # The fixtures convert.py wrote (held-out set, agent-CLI sessions):
        # their stats are what stats() computes from their messages.
        files = glob.glob(os.path.join(ROOT, "tests/fixtures/replay-heldout/*.json"))
        self.assertTrue(files)
        for f in files:
            with open(f, encoding="utf-8") as fh:
                d = json.load(fh)
            self.assertEqual(d["stats"], convert.stats(d["messages"]), f)
            self.assertIsNone(convert.check_pairing(d["messages"]), f)


if __name__ == "__main__":
    unittest.main()
