#!/usr/bin/env python3
"""acceptance.py on a tiny replay JSON with known figures: each verdict as the targets say (ctest replay_acceptance)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "acceptance.py")


def report(cut, saved, worst, copied, present, retention, per100):
    pricing = {"saved_charged": saved, "worst_charged": worst}
    return {"reduction": cut, "retention": retention, "worst_cost_ratio": worst,
            "charged": {"openai": dict(pricing), "anthropic": dict(pricing), "recall_rounds_per_100": per100,
                        "copied_lines": copied, "copied_lines_present": present}}


def codex_messages(output_bytes, later_turn):
    m = [{"role": "user", "content": "go"},
         {"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}]},
         {"role": "tool", "tool_call_id": "c1", "content": "x" * output_bytes}]
    return m + ([{"role": "assistant", "content": "done"}] if later_turn else [])


class Acceptance(unittest.TestCase):
    def run_on(self, trajectories, codex):
        with tempfile.TemporaryDirectory() as d:
            for tid, msgs in codex.items():
                with open(os.path.join(d, tid + ".json"), "w") as f:
                    json.dump({"id": tid, "messages": msgs}, f)
            good = report(0.50, 0.40, 1.05, 100, 95, 0.98, 1.0)
            data = {"trajectories": [dict(r, id=i) for i, r in trajectories.items()],
                    "sets": [dict(good, input=d)], "total": good}
            path = os.path.join(d, "replay.json")
            with open(path, "w") as f:
                json.dump(data, f)
            p = subprocess.run([sys.executable, SCRIPT, path], capture_output=True, text=True)
        lines = {l.split(":")[0].strip(): l for l in p.stdout.splitlines() if ":" in l}
        return p.returncode, lines, p.stdout

    def test_all_met(self):
        rc, lines, out = self.run_on({"codex-a": report(0.30, 0.40, 1.05, 10, 9, 0.98, 1.0)},
                                     {"codex-a": codex_messages(11 * 1024, True)})
        self.assertEqual(rc, 0, out)
        self.assertIn("stale outputs > 10 KB: 1, cut 30.0 % met", lines["codex-a"])
        self.assertNotIn("NOT met", out)
        self.assertIn("all targets met", out)

    def test_codex_stale_output_cut_too_little(self):
        rc, lines, out = self.run_on({"codex-a": report(0.20, 0.40, 1.05, 10, 9, 0.98, 1.0)},
                                     {"codex-a": codex_messages(11 * 1024, True)})
        self.assertEqual(rc, 1, out)
        self.assertIn("stale outputs > 10 KB: 1, cut 20.0 % NOT met", lines["codex-a"])

    def test_codex_output_not_stale_or_small(self):
        # The last output (no later turn) is not stale; a 9 KB one is not over 10 KB: no cut asked of either.
        rc, lines, out = self.run_on({"codex-a": report(0.0, 0.40, 1.05, 0, 0, 0.98, 1.0),
                                      "codex-b": report(0.0, 0.40, 1.05, 0, 0, 0.98, 1.0)},
                                     {"codex-a": codex_messages(40 * 1024, False),
                                      "codex-b": codex_messages(9 * 1024, True)})
        self.assertEqual(rc, 0, out)
        self.assertIn("stale outputs > 10 KB: none", lines["codex-a"])
        self.assertIn("stale outputs > 10 KB: none", lines["codex-b"])

    def test_copied_under_80_in_one_trajectory(self):
        rc, lines, out = self.run_on({"cc": report(0.50, 0.40, 1.05, 10, 7, 0.98, 1.0)}, {})
        self.assertEqual(rc, 1, out)
        self.assertIn("copied 70.0 % NOT met", lines["cc"])

    def test_totals_each_target(self):
        rc, lines, out = self.run_on({"cc": report(0.50, 0.40, 1.05, 10, 9, 0.98, 1.0)}, {})
        self.assertEqual(rc, 0, out)
        for figure in ("cut 50.0 % met", "saved openai 40.0 % met", "saved anthropic 40.0 % met",
                       "worst 1.050 met", "copied 95.0 % met", "retained 98.0 % met", "recall/100 1.000 met"):
            self.assertIn(figure, lines["total"])


    def test_copied_after_one_round_is_shown_never_judged(self):
        r = report(0.50, 0.40, 1.05, 10, 7, 0.98, 1.0)
        r["charged"]["copied_lines_first_round"] = 3
        rc, lines, out = self.run_on({"cc": r}, {})
        self.assertEqual(rc, 1, out)  # 70 % as sent: still not met
        self.assertIn("copied 70.0 % NOT met (after one recall round 100.0 %)", lines["cc"])


class Verdicts(unittest.TestCase):
    def test_bounds(self):
        sys.path.insert(0, os.path.dirname(SCRIPT))
        import acceptance
        t = report(0.45, 0.35, 1.10, 10, 9, 0.97, 2.0)  # exactly on every target: met
        self.assertTrue(acceptance.row("t", t, acceptance.TARGETS)[0])
        for bad in (report(0.449, 0.35, 1.10, 10, 9, 0.97, 2.0), report(0.45, 0.349, 1.10, 10, 9, 0.97, 2.0),
                    report(0.45, 0.35, 1.101, 10, 9, 0.97, 2.0), report(0.45, 0.35, 1.10, 10, 8, 0.97, 2.0),
                    report(0.45, 0.35, 1.10, 10, 9, 0.969, 2.0), report(0.45, 0.35, 1.10, 10, 9, 0.97, 2.01)):
            self.assertFalse(acceptance.row("t", bad, acceptance.TARGETS)[0], bad)


if __name__ == "__main__":
    unittest.main()
