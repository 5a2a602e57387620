// Losses charged by `tokendiet replay` (cli/replay_charges.hpp), on a small
// hand-built trajectory whose requests "as sent" are written by hand: the tool
// output the agent later copies a line from is hidden behind a snip notice.
#include <doctest/doctest.h>

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "cli/replay.hpp"
#include "providers/parsed_message_memo.hpp"
#include "providers/recall_tool.hpp"
#include "pruning/recalled_lines.hpp"
#include "pruning/snip.hpp"
#include "pruning/tokenizer/counter.hpp"

using namespace td;
using namespace td::cli;

namespace {

// 30 lines, none said anywhere else; line 17 is the one the agent copies.
std::string file_text() {
  std::string out;
  for (int i = 1; i <= 30; ++i) {
    if (i > 1) out += "\n";
    out += i == 17 ? "    return compute_total(items, tax_rate=0.2)" : "    step_" + std::to_string(i) + " = 1";
  }
  return out;
}

std::string call(const std::string& id, const std::string& args) {
  return R"({"role":"assistant","content":"","tool_calls":[{"id":")" + id +
         R"(","type":"function","function":{"name":"bash","arguments":")" + args + R"("}}]})";
}
std::string result(const std::string& id, const std::string& content) {
  std::string escaped;
  for (char c : content) escaped += c == '\n' ? std::string("\\n") : std::string(1, c);
  return R"({"role":"tool","tool_call_id":")" + id + R"(","content":")" + escaped + R"("})";
}

// Messages: 0 system, 1 user, 2 cat, 3 the file, 4 ls, 5 its output, 6 the
// edit copying line 17 (and its references compute_total, tax_rate), then
// three more calls: 7..12. Requests end before messages 2, 4, ..., 12.
Trajectory trajectory() {
  const std::string edit = R"({\"old_string\":\"return compute_total(items, tax_rate=0.2)\",\"new_string\":\"x\"})";
  std::string json = R"({"id":"hand","model":"gpt-4o","messages":[)"
                     R"({"role":"system","content":"You are an agent."},)"
                     R"({"role":"user","content":"Fix the bug."},)" +
                     call("c1", "cat a") + "," + result("c1", file_text()) + "," + call("c2", "ls") + "," +
                     result("c2", "x.txt") + "," + call("c3", edit) + "," + result("c3", "edited") + "," +
                     call("c4", "ls") + "," + result("c4", "ok") + "," + call("c5", "ls") + "," + result("c5", "ok2") +
                     "," + R"({"role":"assistant","content":"done"}]})";
  std::string error;
  auto t = parse_trajectory(json, error);
  INFO(error);
  REQUIRE(t);
  return *t;
}

// Requests 2, 4, ..., 12 as sent: message `hidden` (if any) replaced by a
// snip notice from request `from_n` on; `frontier[i]` the diet's frontier.
std::vector<SentRequest> sent(const Trajectory& t, std::size_t hidden, std::size_t from_n,
                              const std::vector<std::uint32_t>& frontier) {
  std::vector<SentRequest> out;
  Trajectory cut = t;
  if (hidden) cut.message_json[hidden] = result(hidden == 3 ? "c1" : "c2", "[... 30 lines hidden]");
  for (std::size_t n = 2, i = 0; n <= 12; n += 2, ++i) {
    SentRequest s;
    s.messages = n;
    s.original = request_body(t, n);
    s.sent = hidden && n >= from_n ? request_body(cut, n) : s.original;
    s.stale_messages = frontier[i];
    out.push_back(std::move(s));
  }
  return out;
}

Measured measured(const std::string& body) {
  tok::CountCache cache(1024);
  providers::ParsedMessageMemo memo;
  return measure(body, cache, memo);
}

std::uint64_t whole(const Measured& m, std::size_t messages) {
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < messages; ++i) n += m.tokens[i];
  return n;
}

constexpr std::size_t kOpenAI = 0, kAnthropic = 1;
const std::vector<std::uint32_t> kNoFrontier(6, 0);

}  // namespace

TEST_CASE("a hidden line the agent copies costs exactly one recall round when recall is offered") {
  const Trajectory t = trajectory();
  const auto requests = sent(t, 3, 6, kNoFrontier);
  const Charges c = charge_losses(t, requests, ChargeRules{RecallMode::Every, 4, 16384});

  CHECK(c.requests == 6);
  CHECK(c.recall_rounds == 1);
  CHECK(c.rereads == 0);
  CHECK(c.charged_requests == 1);
  CHECK(c.used.counted == 3);  // the line, compute_total, tax_rate
  CHECK(c.used.retained == 0);
  CHECK(c.tool_requests == 4);  // from the first cut (request 3) on
  REQUIRE(c.rows.size() == 6);
  CHECK(c.rows[1].rounds == 0);
  CHECK(c.rows[1].tool == 0);
  const Charges::Row& row = c.rows[2];
  CHECK(row.rounds == 1);
  CHECK(row.tool == recall_tool_tokens());

  // The answer: every line of the hidden output (none is in the request as sent).
  const auto& count = tok::exact_counter(tok::EncodingId::O200kBase);
  const std::uint64_t answer = 3 + count.count("tool") + count.count(file_text() + "\n");
  const std::uint64_t the_call = 3 + count.count("assistant") + 3 + count.count("tokendiet_recall") +
                                 count.count(R"({"id":"td-0123456789abcdef0123456789abcdef","lines":"1201-1460"})");
  CHECK(call_tokens() == the_call);
  CHECK(row.round_input == the_call + answer);
  CHECK(recall_tool_tokens() > 50);

  // The request as sent with the tool at its head shares no prefix with the
  // one before (which had none); the round reads its messages from the cache
  // (all but the reply primer, 3 tokens) and writes the call and the answer.
  const std::uint64_t sent_tokens = measured(requests[2].sent).total + recall_tool_tokens();
  const double cached = double(sent_tokens - 3), round_new = double(3 + the_call + answer);
  CHECK(sent_tokens + the_call + answer < 1024);  // openai caches nothing this short
  CHECK(row.charged[kOpenAI] == doctest::Approx(double(sent_tokens) + cached + round_new + 4.0 * double(the_call)));
  CHECK(row.charged[kAnthropic] ==
        doctest::Approx(1.25 * double(sent_tokens) + 0.1 * cached + 1.25 * round_new + 5.0 * double(the_call)));
}

TEST_CASE("without recall, the lost output is read again and carried until the frontier passes it") {
  const Trajectory t = trajectory();
  // The frontier passes message 6 (where the re-read went) at request 5 (n = 10).
  const auto requests = sent(t, 3, 6, {0, 0, 0, 0, 7, 7});
  const Charges c = charge_losses(t, requests, ChargeRules{RecallMode::Off, 4, 16384});

  CHECK(c.recall_rounds == 0);
  CHECK(c.rereads == 1);
  CHECK(c.tool_requests == 0);
  REQUIRE(c.rows.size() == 6);
  const auto& count = tok::exact_counter(tok::EncodingId::O200kBase);
  const std::uint64_t reread = call_tokens() + 3 + count.count("tool") + count.count(file_text());
  CHECK(c.rows[2].rereads == 1);
  CHECK(c.rows[2].round_input == reread);
  CHECK(c.rows[2].carried == 0);
  CHECK(c.rows[3].carried == reread);  // n = 8: in the history, before message 6
  CHECK(c.rows[4].carried == 0);       // n = 10: stale, cut
  CHECK(c.rows[5].carried == 0);

  // At n = 8 the re-read is part of the cached prefix the round left: messages
  // 0..5 and the re-read are read, the rest written.
  const Measured m8 = measured(requests[3].sent);
  const std::uint64_t shared = whole(m8, 6) + reread;
  CHECK(c.rows[3].charged[kAnthropic] ==
        doctest::Approx(0.1 * double(shared) + 1.25 * double(m8.total + reread - shared)));
  // At n = 10 it is gone: the prefix breaks where it was.
  const Measured m10 = measured(requests[4].sent);
  CHECK(c.rows[4].charged[kAnthropic] ==
        doctest::Approx(0.1 * double(whole(m10, 6)) + 1.25 * double(m10.total - whole(m10, 6))));
  CHECK(c.charged[kAnthropic] > c.with[kAnthropic]);
}

TEST_CASE("nothing is charged when nothing the agent uses is lost") {
  const Trajectory t = trajectory();
  SUBCASE("no cut: the same cost as with, no tool") {
    const Charges c = charge_losses(t, sent(t, 0, 0, kNoFrontier), ChargeRules{});
    CHECK(c.recall_rounds == 0);
    CHECK(c.rereads == 0);
    CHECK(c.tool_requests == 0);
    CHECK(c.used.counted == 3);
    CHECK(c.used.retained == 3);
    for (std::size_t p : {kOpenAI, kAnthropic}) {
      CHECK(c.charged[p] == doctest::Approx(c.with[p]));
      CHECK(c.with[p] == doctest::Approx(c.without[p]));
    }
  }
  SUBCASE("a cut of an output nobody uses: only the tool is paid, no round") {
    const Charges c = charge_losses(t, sent(t, 5, 6, kNoFrontier), ChargeRules{});
    CHECK(c.recall_rounds == 0);
    CHECK(c.rereads == 0);
    CHECK(c.charged_requests == 0);
    CHECK(c.tool_requests == 4);
    CHECK(c.used.retained == c.used.counted);
    for (const Charges::Row& row : c.rows) CHECK(row.round_input == 0);
    CHECK(c.charged[kAnthropic] > c.with[kAnthropic]);  // the tool's tokens
  }
  SUBCASE("recall off: nothing at all") {
    const Charges c = charge_losses(t, sent(t, 5, 6, kNoFrontier), ChargeRules{RecallMode::Off, 4, 16384});
    for (std::size_t p : {kOpenAI, kAnthropic}) CHECK(c.charged[p] == doctest::Approx(c.with[p]));
  }
}

TEST_CASE("which cuts can be recalled") {
  const std::vector<std::string> tombstones = {"an evicted output with line_42 in it"};
  CHECK_FALSE(recall_offered(RecallMode::Every, false, false).tool);  // no cut yet: no tool
  CHECK(recall_offered(RecallMode::FromStart, false, false).tool);    // the tool from the first request
  CHECK(recallable(recall_offered(RecallMode::Every, true, false), "anything", {}));
  CHECK(recallable(recall_offered(RecallMode::Tombstones, true, true), "line_42", tombstones));
  CHECK_FALSE(recallable(recall_offered(RecallMode::Tombstones, true, true), "line_43", tombstones));
  CHECK_FALSE(recall_offered(RecallMode::Tombstones, true, false).tool);
  CHECK_FALSE(recall_offered(RecallMode::Off, true, true).tool);
}

// The recall call (cli/replay_recall_calls.hpp): what the model asks is the
// lines it needs plus a margin, as the notice's range locates them, and the
// answer charged is the proxy's own answer to that call.
TEST_CASE("a recall round is charged the narrow range the model asks, not the whole hidden gap") {
  const Trajectory t = trajectory();
  const std::string handle = pruning::recall_handle(file_text());
  Trajectory cut = t;
  cut.message_json[3] = result("c1", "    step_1 = 1\n[… " + handle + ":2-29 hidden]\n    step_30 = 1");
  std::vector<SentRequest> requests = sent(t, 0, 0, kNoFrontier);
  for (SentRequest& s : requests)
    if (s.messages >= 6) s.sent = request_body(cut, s.messages);
  const Charges c = charge_losses(t, requests, ChargeRules{RecallMode::Every, 4, 16384});

  CHECK(c.recall_rounds == 1);
  CHECK(c.recall_calls == 1);
  REQUIRE(c.rows.size() == 6);
  // Line 17 and 10 lines on each side: lines 7-27, as the proxy answers them.
  const std::string answer =
      providers::recall_result_text({handle, 7, 27}, std::optional<std::string>(file_text()), 16384);
  CHECK(answer.find("step_7 = 1\n") != std::string::npos);
  CHECK(answer.find("step_6 = 1") == std::string::npos);
  CHECK(answer.find("step_28 = 1") == std::string::npos);
  CHECK(c.answer_bytes == answer.size());
  CHECK(c.rows[2].round_input == call_tokens() + result_tokens(answer));
  CHECK(c.copied.counted == 1);
  CHECK(c.copied.retained == 0);
  CHECK(c.copied_first_round == 1);  // the round's answer holds the copied line
}

TEST_CASE("the calls a model makes for lost lines: by gap, by name, page by page, or by hidden lines") {
  std::string text;  // 60 lines: "line N of the file", line 30 and 40 the ones copied
  for (int i = 1; i <= 60; ++i) text += "line " + std::to_string(i) + " of the file\n";
  const std::string handle = pruning::recall_handle(text);
  const std::unordered_set<std::string_view> none;
  std::vector<std::size_t> shown_by;
  const std::vector<std::string> items = {"line 30 of the file", "line 40 of the file"};

  SUBCASE("two lost lines in one gap: one call covering both and the margin, within the gap") {
    const auto calls = recall_calls(text, "[… " + handle + ":25-45 hidden]", none, items, {10, 16384}, shown_by);
    REQUIRE(calls.size() == 1);
    CHECK(calls[0].first == 25);
    CHECK(calls[0].last == 45);
    CHECK(shown_by == std::vector<std::size_t>{0, 0});
  }
  SUBCASE("in two gaps: a call each") {
    const auto calls = recall_calls(text, "[… " + handle + ":2-35 hidden]\n[… " + handle + ":37-58 hidden]", none,
                                    items, {3, 16384}, shown_by);
    REQUIRE(calls.size() == 2);
    CHECK((calls[0].first == 27 && calls[0].last == 33));
    CHECK((calls[1].first == 37 && calls[1].last == 43));
    CHECK(shown_by == std::vector<std::size_t>{0, 1});
  }
  SUBCASE("an answer cut at its bound: the rest is asked one wave later, as its notice says") {
    const auto calls = recall_calls(text, "[… " + handle + ":1-60 hidden]", none, items, {10, 200}, shown_by);
    REQUIRE(calls.size() >= 2);
    CHECK(calls[0].wave == 0);
    CHECK(calls[0].first == 20);
    CHECK(calls[0].answer.find("ask for lines " + std::to_string(calls[0].last + 1) + "-50 next") != std::string::npos);
    CHECK(calls[1].wave == 1);
    CHECK(calls[1].first == calls[0].last + 1);
    CHECK(calls.back().answer.find("line 40 of the file") != std::string::npos);
    CHECK(shown_by[1] == calls.size() - 1);
  }
  SUBCASE("a notice naming the text with no range: the whole text") {
    const auto calls = recall_calls(text, "[same output as tool call c1: 900 bytes omitted " + handle + "]", none,
                                    items, {10, 16384}, shown_by);
    REQUIRE(calls.size() == 1);
    CHECK(calls[0].answer == text);
  }
  SUBCASE("no notice names it: the hidden lines, in order") {
    const std::unordered_set<std::string_view> sent = {"line 1 of the file"};
    const auto calls = recall_calls(text, "nothing", sent, items, {10, 40}, shown_by);
    REQUIRE(calls.size() == 1);
    CHECK(calls[0].answer == "line 2 of the file\nline 3 of the file\n");
    CHECK(shown_by[0] == std::numeric_limits<std::size_t>::max());
  }
}

TEST_CASE("a recall answers the hidden lines, cut at a whole line within its bound") {
  const std::string output = "kept line\nhidden one\nhidden two\nkept too";
  const std::unordered_set<std::string_view> sent = {"kept line", "kept too"};
  CHECK(hidden_lines(output, sent, 100) == "hidden one\nhidden two\n");
  CHECK(hidden_lines(output, sent, 15) == "hidden one\n");
  CHECK(hidden_lines(output, sent, 4) == "hidd");  // one line longer than the bound: in part
  CHECK(hidden_lines("kept line", sent, 100).empty());
}

// Recalled lines stay (docs/design.md §Recall): what a charged recall round
// answered, by the handle and line range the sent request's notice names,
// is what the later requests are dieted with.
TEST_CASE("a charged recall round reports the hidden gap it answered, by the notice's handle and lines") {
  const Trajectory t = trajectory();
  const std::string handle = pruning::recall_handle(file_text());
  Trajectory cut = t;
  // Lines 1 and 30 kept, 2-29 behind one notice; the agent copies line 17.
  cut.message_json[3] = result("c1", "    step_1 = 1\n[… " + handle + ":2-29 hidden]\n    step_30 = 1");
  auto run = [&](const std::string& recalled_lines, std::uint64_t max_answer_bytes) {
    tok::CountCache cache(1024);
    providers::ParsedMessageMemo memo;
    ReferenceIndex refs(t.texts);
    LossCharger charger(t.texts, refs, ChargeRules{RecallMode::Every, 4, max_answer_bytes, recalled_lines});
    std::vector<std::vector<pruning::RecalledLines::Range>> out;
    for (std::size_t n = 2; n <= 12; n += 2) {
      const Measured before = measure(request_body(t, n), cache, memo);
      const Measured after = n >= 6 ? measure(request_body(cut, n), cache, memo) : before;
      charger.request(n, before, after, SentFacts{n >= 6, 0, nullptr});
      out.push_back(charger.recalled());
    }
    return out;
  };
  const auto bits = *pruning::RecalledLines::handle_bits(handle);
  const auto answered = run("answered", 16384);
  REQUIRE(answered.size() == 6);
  CHECK(answered[1].empty());
  REQUIRE(answered[2].size() == 1);  // n = 6, the edit copying line 17
  // The call asks line 17 and 10 lines on each side (cli/replay_recall_calls.hpp).
  CHECK(answered[2][0] == pruning::RecalledLines::Range{bits, 7, 27, 0});
  CHECK(answered[3].empty());
  // An answer of 100 bytes shows lines 7-12; line 17 takes the pages up to it.
  CHECK(run("answered", 100)[2] ==
        std::vector<pruning::RecalledLines::Range>{{bits, 7, 12, 0}, {bits, 13, 16, 0}, {bits, 17, 20, 0}});
  CHECK(run("output", 16384)[2] == std::vector<pruning::RecalledLines::Range>{{bits, 1, 30, 0}});
  CHECK(run("off", 16384)[2].empty());
}
