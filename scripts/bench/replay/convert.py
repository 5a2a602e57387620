#!/usr/bin/env python3
"""Converts one recorded agent session into a replay trajectory.

The output is the fixture format of tests/fixtures/replay/README.md (OpenAI
chat-completions messages plus `id`, `source`, `model`, `format`, `stats`),
what `tokendiet replay` and the pruning invariant tests read. The rules each
input format follows are the ones that README gives ("How each source was
converted"); this script is them, so anyone can regenerate a fixture from the
file its `source` names:

    scripts/bench/replay/convert.py codex rollout.jsonl --id codex-x \\
        --repo owner/name --path path/in/repo --commit SHA --license MIT \\
        > tests/fixtures/replay-heldout/codex-x.json

Input formats:
  mini-swe-agent  a mini-swe-agent `*.traj.json` (its `messages` array)
  claude-code     a Claude Code session JSONL (~/.claude/projects/...)
  codex           a Codex CLI rollout JSONL (~/.codex/sessions/.../rollout-*.jsonl)
  gemini-cli      a Gemini CLI session JSON (~/.gemini/tmp/.../chats/session-*.json)

Python 3 standard library only.
"""

import argparse
import json
import sys

# Key order of a message, as the fixtures write it (a Claude Code message's
# thinking came before its tool_use blocks, and its fixtures keep that order).
MESSAGE_KEYS = ("role", "content", "tool_calls", "tool_call_id", "name", "reasoning_content")
CLAUDE_KEYS = ("role", "content", "reasoning_content", "tool_calls", "tool_call_id")


def tool_call(call_id, name, arguments):
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def ordered(message, keys=MESSAGE_KEYS):
    return {k: message[k] for k in keys if k in message}


def text_of(content, sep="\n"):
    """A content that is a string or a list of text blocks, as one string."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append(block["text"])
        return sep.join(parts)
    return json.dumps(content, ensure_ascii=False)


# mini-swe-agent: already chat-completions; bookkeeping keys and the final
# `exit` marker (never sent to a model) are dropped.
def from_mini_swe_agent(path):
    with open(path, encoding="utf-8") as f:
        traj = json.load(f)
    model = ((traj.get("info") or {}).get("config") or {}).get("model", {}).get("model_name", "")
    out = []
    for m in traj["messages"]:
        if m.get("role") == "exit":
            continue
        msg = {"role": m["role"], "content": text_of(m.get("content"))}
        if m.get("tool_calls"):
            msg["tool_calls"] = [
                tool_call(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in m["tool_calls"]
            ]
        if m.get("tool_call_id") is not None:
            msg["tool_call_id"] = m["tool_call_id"]
        if m.get("name") is not None and m["role"] == "tool":
            msg["name"] = m["name"]
        if m.get("reasoning_content"):
            msg["reasoning_content"] = m["reasoning_content"]
        out.append(msg)
    return model, out


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


# Claude Code: the main thread's records up to the first compaction. The
# records of one model response share `message.id` and become one assistant
# message (text blocks joined by a blank line, tool_use -> tool_calls with the
# JSON of `input`, thinking -> reasoning_content); each tool_result becomes a
# tool message (its content flattened to text, is_error dropped). Claude Code
# logs no system prompt, so there is none.
def from_claude_code(path):
    out = []
    model = ""
    by_id = {}  # message.id -> its merged assistant message (parts still to join)
    for rec in read_jsonl(path):
        kind = rec.get("type")
        if rec.get("isCompactSummary") or (kind == "system" and rec.get("subtype") == "compact_boundary"):
            break
        if rec.get("isSidechain") or kind not in ("user", "assistant"):
            continue
        message = rec.get("message") or {}
        content = message.get("content")
        if kind == "assistant":
            if not model and message.get("model") and message["model"] != "<synthetic>":
                model = message["model"]
            key = message.get("id") or rec.get("uuid")
            msg = by_id.get(key)
            if msg is None:
                msg = {"role": "assistant", "texts": [], "thinking": [], "tool_calls": []}
                by_id[key] = msg
                out.append(msg)
            blocks = content if isinstance(content, list) else [{"type": "text", "text": text_of(content)}]
            for b in blocks:
                t = b.get("type")
                if t == "text":
                    msg["texts"].append(b.get("text", ""))
                elif t == "thinking":
                    msg["thinking"].append(b.get("thinking", ""))
                elif t == "tool_use":
                    msg["tool_calls"].append(
                        tool_call(b["id"], b["name"], json.dumps(b.get("input", {}), ensure_ascii=False))
                    )
            continue
        if isinstance(content, str):
            out.append({"role": "user", "content": content})
            continue
        texts = []
        for b in content or []:
            if b.get("type") == "tool_result":
                out.append({"role": "tool", "content": text_of(b.get("content")), "tool_call_id": b["tool_use_id"]})
            elif b.get("type") == "text":
                texts.append(b.get("text", ""))
        if texts:
            out.append({"role": "user", "content": "\n".join(texts)})
    messages = []
    for m in out:
        if m["role"] == "assistant":
            msg = {"role": "assistant", "content": "\n\n".join(m["texts"])}
            if m["tool_calls"]:
                msg["tool_calls"] = m["tool_calls"]
            if any(m["thinking"]):
                msg["reasoning_content"] = "\n\n".join(x for x in m["thinking"] if x)
            messages.append(msg)
        else:
            messages.append(m)
    return model, messages


# Codex CLI rollout: only `response_item` records, plus the session's base
# instructions, up to the first compaction (a `compacted` record). Developer messages become system messages, user messages user
# messages (the environment and IDE context kept as Codex sent them). One model
# response (its text, `function_call`s and `custom_tool_call`s such as
# apply_patch, whose arguments become {"input": <patch>}) is one assistant
# message; a response ends at the `token_count` event Codex writes after it, or
# at the next output or user message. Each output is a tool message, verbatim:
# what Codex truncated itself stays as Codex sent it. Encrypted reasoning and
# hosted web-search calls are dropped (nothing of them is resent as text).
def from_codex(path):
    out = []
    model = ""
    open_msg = None
    for rec in read_jsonl(path):
        kind = rec.get("type")
        p = rec.get("payload") or {}
        if kind == "session_meta":
            base = p.get("base_instructions")
            text = base.get("text") if isinstance(base, dict) else base
            if text:
                out.append({"role": "system", "content": text})
            continue
        if kind == "compacted":
            break  # Codex replaced the history: the session up to its first compaction
        if kind == "turn_context":
            model = model or p.get("model", "")
            continue
        if kind == "event_msg":
            if p.get("type") == "token_count":
                open_msg = None
            continue
        if kind != "response_item":
            continue
        t = p.get("type")
        if t == "message":
            role = p.get("role")
            text = text_of(p.get("content"))
            if role == "assistant":
                if open_msg is None:
                    open_msg = {"role": "assistant", "content": ""}
                    out.append(open_msg)
                open_msg["content"] = text if not open_msg["content"] else open_msg["content"] + "\n" + text
                continue
            open_msg = None
            out.append({"role": "system" if role in ("developer", "system") else "user", "content": text})
        elif t in ("function_call", "custom_tool_call", "local_shell_call"):
            if open_msg is None:
                open_msg = {"role": "assistant", "content": ""}
                out.append(open_msg)
            if t == "function_call":
                args = p.get("arguments", "")
            elif t == "custom_tool_call":
                args = json.dumps({"input": p.get("input", "")}, ensure_ascii=False)
            else:
                args = json.dumps(p.get("action", {}), ensure_ascii=False)
            name = p.get("name") or ("local_shell" if t == "local_shell_call" else "")
            open_msg.setdefault("tool_calls", []).append(tool_call(p.get("call_id") or p.get("id"), name, args))
        elif t in ("function_call_output", "custom_tool_call_output"):
            open_msg = None
            output = p.get("output")
            if not isinstance(output, str):
                output = text_of(output) if isinstance(output, list) else json.dumps(output, ensure_ascii=False)
            out.append({"role": "tool", "content": output, "tool_call_id": p["call_id"]})
    return model, out


# Gemini CLI session: each `gemini` record is one assistant message with its
# function calls (arguments: the JSON of `args`), followed by their results
# (`functionResponse.response.output`, or its error); thoughts are dropped, as
# Gemini CLI does not resend them.
def from_gemini_cli(path):
    with open(path, encoding="utf-8") as f:
        session = json.load(f)
    out = []
    model = ""
    for m in session["messages"]:
        kind = m.get("type")
        if kind == "user":
            out.append({"role": "user", "content": text_of(m.get("content"))})
        elif kind == "gemini":
            model = model or m.get("model", "")
            msg = {"role": "assistant", "content": text_of(m.get("content"))}
            calls = m.get("toolCalls") or []
            if calls:
                msg["tool_calls"] = [
                    tool_call(c["id"], c["name"], json.dumps(c.get("args", {}), ensure_ascii=False)) for c in calls
                ]
            out.append(msg)
            for c in calls:
                out.append({"role": "tool", "content": gemini_result(c), "tool_call_id": c["id"]})
    return model, out


def gemini_result(call):
    parts = []
    for r in call.get("result") or []:
        resp = (r.get("functionResponse") or {}).get("response") or {}
        if "output" in resp:
            parts.append(text_of(resp["output"]))
        elif "error" in resp:
            parts.append(text_of(resp["error"]))
        else:
            parts.append(json.dumps(resp, ensure_ascii=False))
    return "\n".join(parts)


CONVERTERS = {
    "mini-swe-agent": from_mini_swe_agent,
    "claude-code": from_claude_code,
    "codex": from_codex,
    "gemini-cli": from_gemini_cli,
}


def stats(messages):
    roles = {}
    seen = set()
    duplicates = 0
    largest = 0
    chars = 0
    for m in messages:
        roles[m["role"]] = roles.get(m["role"], 0) + 1
        chars += len(m["content"]) + len(m.get("reasoning_content", ""))
        for c in m.get("tool_calls", []):
            chars += len(c["function"]["name"]) + len(c["function"]["arguments"])
        if m["role"] == "tool":
            largest = max(largest, len(m["content"]))
            if len(m["content"]) >= 256:
                duplicates += m["content"] in seen
                seen.add(m["content"])
    return {
        "messages": len(messages),
        "roles": roles,
        "assistant_turns": roles.get("assistant", 0),
        "content_chars": chars,
        "largest_tool_output_chars": largest,
        "duplicate_tool_outputs_ge256": duplicates,
    }


def check_pairing(messages):
    """Every tool message answers an earlier call, every call is answered
    (but the last assistant message's); the README's pairing rule."""
    pending = []
    last_assistant = max((i for i, m in enumerate(messages) if m["role"] == "assistant"), default=-1)
    for i, m in enumerate(messages):
        if m["role"] == "tool":
            if m["tool_call_id"] not in pending:
                return f"message {i}: tool result for unknown call {m['tool_call_id']}"
            pending.remove(m["tool_call_id"])
        elif pending and not (m["role"] == "assistant" and i > last_assistant):
            return f"message {i}: calls {pending} not answered before it"
        if m["role"] == "assistant":
            pending.extend(c["id"] for c in m.get("tool_calls", []))
    return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("format", choices=sorted(CONVERTERS))
    ap.add_argument("input", help="the session file, as its repository has it")
    ap.add_argument("--id", required=True, help="the trajectory's id (its file name without .json)")
    ap.add_argument("--repo", required=True)
    ap.add_argument("--path", required=True, help="the file's path in --repo")
    ap.add_argument("--commit", required=True, help="40-hex commit of --repo")
    ap.add_argument("--license", required=True)
    ap.add_argument("--label", help="the `format` field written (default: the input format)")
    ap.add_argument("--model", help="the model, where the session does not name it")
    ap.add_argument("-o", "--output", help="write here instead of stdout")
    args = ap.parse_args(argv)

    model, messages = CONVERTERS[args.format](args.input)
    keys = CLAUDE_KEYS if args.format == "claude-code" else MESSAGE_KEYS
    messages = [ordered(m, keys) for m in messages]
    problem = check_pairing(messages)
    if problem:
        sys.exit(f"{args.input}: {problem}")
    doc = {
        "id": args.id,
        "source": {"repo": args.repo, "path": args.path, "commit": args.commit, "license": args.license},
        "model": args.model or model,
        "format": args.label or args.format,
        "messages": messages,
        "stats": stats(messages),
    }
    text = json.dumps(doc, indent=1, ensure_ascii=False) + "\n"
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
