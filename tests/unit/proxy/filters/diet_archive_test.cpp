// Semantic eviction through the diet filter (docs/design.md §The archive):
// the evicted outputs are archived off the request's thread before the
// pruned request may go; a failed write sends the request unpruned of them,
// counted; without an archive nothing is evicted. A request that went out
// with tombstones names its tasks and carries the archive for recall.
#include <doctest/doctest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <atomic>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <future>

#include "archive/store.hpp"
#include "diet_chain.hpp"
#include "filter_reports.hpp"
#include "proxy/phases/header_map.hpp"
#include "proxy/telemetry/work_pool.hpp"
#include "temp_dir.hpp"

using namespace td::proxy;
using namespace std::chrono_literals;
using td::test::BodyPhase;
using td::test::diet_report;
using td::test::DietChain;
using td::test::TempDir;

namespace {

constexpr const char* kKey = "0123456789abcdef";

// A distinct output of about `bytes` bytes.
std::string output(const std::string& tag, int bytes) {
  std::string s;
  for (int i = 0; static_cast<int>(s.size()) < bytes; ++i) s += tag + " line " + std::to_string(i) + " of output\n";
  s.resize(bytes);
  return s;
}

std::string todos(const char* first, const char* second) {
  return std::string(R"({"todos":[{"content":"Fix the parser","status":")") + first +
         R"(","activeForm":"x"},{"content":"Run the tests","status":")" + second + R"(","activeForm":"y"}]})";
}

// An OpenAI chat body: the parser task's two outputs, then the task
// completed, then a dozen steps of the next task. Returns the parser's
// outputs in `evicted`.
std::string session_body(std::vector<std::string>& evicted) {
  rapidjson::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  d.AddMember("model", "gpt-4o", a);
  rapidjson::Value messages(rapidjson::kArrayType);
  auto text_message = [&](const char* role, const std::string& text) {
    rapidjson::Value m(rapidjson::kObjectType);
    m.AddMember("role", rapidjson::StringRef(role), a);
    m.AddMember("content", rapidjson::Value(text.c_str(), a), a);
    messages.PushBack(m, a);
  };
  int calls = 0;
  auto step = [&](const char* tool, const std::string& args, const std::string& result) {
    const std::string id = "call_" + std::to_string(calls++);
    rapidjson::Value call(rapidjson::kObjectType), fn(rapidjson::kObjectType), list(rapidjson::kArrayType);
    fn.AddMember("name", rapidjson::StringRef(tool), a);
    fn.AddMember("arguments", rapidjson::Value(args.c_str(), a), a);
    call.AddMember("id", rapidjson::Value(id.c_str(), a), a);
    call.AddMember("type", "function", a);
    call.AddMember("function", fn, a);
    list.PushBack(call, a);
    rapidjson::Value m(rapidjson::kObjectType);
    m.AddMember("role", "assistant", a);
    m.AddMember("content", rapidjson::Value(rapidjson::kNullType), a);
    m.AddMember("tool_calls", list, a);
    messages.PushBack(m, a);
    rapidjson::Value r(rapidjson::kObjectType);
    r.AddMember("role", "tool", a);
    r.AddMember("tool_call_id", rapidjson::Value(id.c_str(), a), a);
    r.AddMember("content", rapidjson::Value(result.c_str(), a), a);
    messages.PushBack(r, a);
  };
  text_message("system", "You are an agent.");
  text_message("user", "Fix the parser, then run the tests.");
  step("bash", R"({"command":"ls"})", output("ls", 3000));
  step("TodoWrite", todos("in_progress", "pending"), "Todos have been modified successfully.");
  evicted = {output("parser-a", 4000), output("parser-b", 4000)};
  step("bash", R"({"command":"cat parser.c"})", evicted[0]);
  step("bash", R"({"command":"make"})", evicted[1]);
  step("TodoWrite", todos("completed", "in_progress"), "Todos have been modified successfully.");
  step("bash", R"({"command":"make test"})", output("tests", 3000));
  for (int k = 0; k < 12; ++k) step("bash", R"({"command":"step"})", output("t" + std::to_string(k), 300));
  d.AddMember("messages", messages, a);
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  d.Accept(w);
  return buf.GetString();
}

// Only semantic mode acts (the stale frontier never moves), on a short
// session bet on as if it ran as long again.
td::config::Config semantic_config() {
  td::config::Config cfg;
  td::pruning::Profile p;
  p.semantic_threshold = 2000;
  p.completed_tasks_min_output_bytes = 256;  // the small outputs of this session
  p.trigger_tokens = 1u << 30;
  p.payback_turn_fraction = 1;
  p.max_loss = 1;
  cfg.profiles.push_back(p);
  return cfg;
}

RequestContext chat_context() {
  RequestContext ctx;
  ctx.method = "POST";
  ctx.target = "/v1/chat/completions";
  ctx.key_fingerprint = kKey;
  return ctx;
}

bool holds(const std::string& body, const std::string& text) {
  // The outputs are plain ASCII lines: in JSON their newlines are \n.
  std::string escaped;
  for (char c : text) escaped += c == '\n' ? std::string("\\n") : std::string(1, c);
  return body.find(escaped) != std::string::npos;
}

struct Run {
  std::string body;
  RequestContext ctx = chat_context();
  bool paused = false;
};

Run diet(DietChain& chain, const std::string& sent) {
  Run run;
  run.body = sent;
  const BodyPhase phase = chain.body_phase(run.ctx, run.body);
  CHECK_FALSE(phase.answer.has_value());
  run.paused = phase.pauses > 0;
  return run;
}

// What the recall loop answers from: the request's offer.
const RecallSource* recall(const RequestContext& ctx) {
  const RecallOffer* offer = ctx.objects.find<RecallOffer>();
  return offer ? offer->source.get() : nullptr;
}

const EvictionReport& eviction(const RequestContext& ctx) {
  static const EvictionReport none;
  const EvictionReport* r = ctx.objects.find<EvictionReport>();
  return r ? *r : none;
}

}  // namespace

TEST_CASE("diet + archive: evicted outputs are archived on the archive's thread, then the pruned request goes") {
  std::vector<std::string> evicted;
  const std::string sent = session_body(evicted);
  TempDir tmp;
  td::archive::Store store(tmp.path());
  WorkPool thread(1, [] {});
  std::atomic<int> failures{0};
  td::diet::DietCaches caches;
  DietChain filter(
      semantic_config(),
      DietServices{.caches = &caches, .archive = DietArchive{[&] { return &store; }, &thread, [&] { ++failures; }}});
  Run run = diet(filter, sent);
  CHECK(run.paused);  // the write was not made on the request's thread
  CHECK(run.body != sent);
  CHECK(run.body.find("tokendiet_recall can read it back") != std::string::npos);
  for (const std::string& text : evicted) {
    CHECK_FALSE(holds(run.body, text));
    const std::string id = td::pruning::archive_id(text);
    CHECK(run.body.find(id) != std::string::npos);  // the tombstone names its entry
    auto entry = store.read(kKey, id);
    REQUIRE(entry);
    CHECK(entry->text == text);  // byte for byte
    CHECK(entry->info.task == "Fix the parser");
  }
  CHECK(eviction(run.ctx).evicted_tasks == std::vector<std::string>{"Fix the parser"});
  CHECK(run.body.find(R"("name":"tokendiet_recall")") != std::string::npos);  // the model may read them back
  CHECK(eviction(run.ctx).archive_error.empty());
  CHECK(failures == 0);
  CHECK_FALSE(run.ctx.fail_open);
  // The recall loop reads the entries back with the same key only.
  REQUIRE(recall(run.ctx));
  CHECK(recall(run.ctx)->read(kKey, td::pruning::archive_id(evicted[0])) == evicted[0]);
  CHECK_FALSE(recall(run.ctx)->read("fedcba9876543210", td::pruning::archive_id(evicted[0])));

  // The next request (the same history) evicts identically; the entries are
  // not written twice.
  Run again = diet(filter, sent);
  CHECK(again.body == run.body);
  CHECK(store.list().size() == 2);
  CHECK(store.written_entries() == 2);

  // From the request's own copy: no file is read on the I/O thread (the
  // entries stay readable with the archive's files gone).
  std::filesystem::remove_all(tmp.path());
  CHECK(recall(run.ctx)->read(kKey, td::pruning::archive_id(evicted[1])) == evicted[1]);
  CHECK_FALSE(recall(run.ctx)->read(kKey, "td-00000000000000000000000000000000"));
}

TEST_CASE("diet + archive: a failed write sends the request unpruned of those outputs, and counts it") {
  std::vector<std::string> evicted;
  const std::string sent = session_body(evicted);
  TempDir tmp;
  std::ofstream(tmp.file("file")) << "x";
  td::archive::Store store(tmp.file("file") + "/archive");  // below a regular file: nothing can be written
  WorkPool thread(1, [] {});
  std::atomic<int> failures{0};
  td::diet::DietCaches caches;
  DietChain filter(
      semantic_config(),
      DietServices{.caches = &caches, .archive = DietArchive{[&] { return &store; }, &thread, [&] { ++failures; }}});
  Run run = diet(filter, sent);
  CHECK(run.body.find("tokendiet_recall can read it back") == std::string::npos);
  for (const std::string& text : evicted) CHECK(holds(run.body, text));
  CHECK(failures == 1);
  CHECK(eviction(run.ctx).archive_error.find("file") != std::string::npos);
  CHECK(eviction(run.ctx).evicted_tasks.empty());
  CHECK(recall(run.ctx) == nullptr);
  CHECK(run.body.find(R"("name":"tokendiet_recall")") == std::string::npos);
  CHECK(diet_report(run.ctx).mode != td::pruning::Mode::Semantic);

  // The same request with a working archive would have been pruned: the
  // failure is what kept the outputs.
  TempDir ok_dir;
  td::archive::Store ok(ok_dir.path());
  td::diet::DietCaches caches2;
  DietChain working(semantic_config(),
                    DietServices{.caches = &caches2, .archive = DietArchive{[&] { return &ok; }, nullptr, {}}});
  CHECK(diet(working, sent).body.find("tokendiet_recall can read it back") != std::string::npos);
}

TEST_CASE("diet + archive: without an archive semantic eviction does not run, and nothing pauses") {
  std::vector<std::string> evicted;
  const std::string sent = session_body(evicted);
  td::diet::DietCaches caches;
  DietChain filter(semantic_config(), DietServices{.caches = &caches});
  Run run = diet(filter, sent);
  CHECK_FALSE(run.paused);
  for (const std::string& text : evicted) CHECK(holds(run.body, text));
  CHECK(recall(run.ctx) == nullptr);
  CHECK(eviction(run.ctx).evicted_tasks.empty());
}

TEST_CASE("diet + archive: a big body dieted on a diet thread is archived there, as the inline diet would be") {
  std::vector<std::string> evicted;
  const std::string sent = session_body(evicted);
  TempDir inline_dir, offload_dir;
  td::archive::Store inline_store(inline_dir.path()), offload_store(offload_dir.path());
  td::diet::DietCaches c1, c2;
  DietChain inline_filter(
      semantic_config(),
      DietServices{.caches = &c1, .archive = DietArchive{[&] { return &inline_store; }, nullptr, {}}});
  td::config::Config offload_cfg = semantic_config();
  offload_cfg.limits.diet_offload_bytes = 1;
  WorkPool pool(1, [] {});
  DietChain offload_filter(
      offload_cfg,
      DietServices{
          .caches = &c2, .workers = &pool, .archive = DietArchive{[&] { return &offload_store; }, nullptr, {}}});
  Run a = diet(inline_filter, sent);
  Run b = diet(offload_filter, sent);
  CHECK(b.paused);
  CHECK(a.body == b.body);
  CHECK(a.body != sent);
  CHECK(offload_store.list().size() == 2);
  CHECK(eviction(b.ctx).evicted_tasks == eviction(a.ctx).evicted_tasks);
  CHECK(recall(b.ctx) != nullptr);
}

TEST_CASE("diet + archive: the request where tombstones are first placed restates the task; the next does not") {
  std::vector<std::string> evicted;
  rapidjson::Document full;
  full.Parse(session_body(evicted).c_str());
  REQUIRE_FALSE(full.HasParseError());
  TempDir tmp;
  td::archive::Store store(tmp.path());
  td::diet::DietCaches caches;
  DietChain filter(semantic_config(), DietServices{.caches = &caches, .archive = DietArchive{[&] { return &store; }}});
  const auto restated = [](const Run& run) {
    return std::find(diet_report(run.ctx).strategies.begin(), diet_report(run.ctx).strategies.end(),
                     std::string_view("reanchor")) != diet_report(run.ctx).strategies.end();
  };
  int seen = 0;  // requests with tombstones so far
  const auto& messages = full["messages"];
  for (rapidjson::SizeType n = 2; n <= messages.Size() && seen < 2; ++n) {
    if (n < messages.Size() && std::string_view(messages[n]["role"].GetString()) != "assistant") continue;
    rapidjson::Document d;
    d.CopyFrom(full, d.GetAllocator());
    d["messages"].Erase(d["messages"].Begin() + n, d["messages"].End());
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    d.Accept(w);
    const Run run = diet(filter, buf.GetString());
    CAPTURE(n);
    if (eviction(run.ctx).evicted_tasks.empty()) {
      CHECK_FALSE(restated(run));
      continue;
    }
    CHECK(restated(run) == (seen == 0));  // the step, and only the step
    ++seen;
  }
  CHECK(seen == 2);
}
