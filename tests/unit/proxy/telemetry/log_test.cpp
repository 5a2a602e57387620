#include <doctest/doctest.h>

#include "proxy/reports/reports.hpp"
#include "proxy/telemetry/log.hpp"

using namespace td::proxy;

TEST_CASE("the access line redacts query secrets and carries only the key's fingerprint") {
  RequestContext ctx;
  ctx.request_id = 7;
  ctx.method = "POST";
  ctx.target = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse&key=AIzaSECRET";
  ctx.provider = Provider::gemini;
  ctx.upstream = "gemini";
  ctx.model = "gemini-2.5-flash";
  ctx.stream = true;
  ctx.status = 200;
  ctx.bytes_in = 10;
  ctx.bytes_out = 20;
  ctx.total_ms = 1.5;
  ctx.key_fingerprint = "0123456789abcdef";
  ctx.session_id = "s\"1";
  auto line = access_line(ctx);
  const std::string& text = line.text();
  CHECK(text.find("AIzaSECRET") == std::string::npos);
  CHECK(text.find(R"("path":"/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse&key=REDACTED")") !=
        std::string::npos);
  CHECK(text.find(R"("event":"request","id":7,"method":"POST")") != std::string::npos);
  CHECK(text.find(R"("provider":"gemini","upstream":"gemini","model":"gemini-2.5-flash","stream":true,"status":200)") !=
        std::string::npos);
  CHECK(text.find(R"("key":"0123456789abcdef")") != std::string::npos);
  CHECK(text.find(R"("session":"s\"1")") != std::string::npos);
  CHECK(text.find(R"("ms":1.500)") != std::string::npos);
  CHECK(text.find("ttfb_ms") == std::string::npos);  // no response byte was sent
  CHECK(text.front() == '{');
  CHECK(text.back() == '}');
}

TEST_CASE("the access line: the diet's mode, the strategies joined with commas, usage as reported") {
  RequestContext ctx;
  ctx.method = "POST";
  ctx.target = "/v1/chat/completions";
  ctx.provider = Provider::openai;
  CHECK(access_line(ctx).text().find("mode") == std::string::npos);  // the diet never decided
  CHECK(access_line(ctx).text().find("strategies") == std::string::npos);
  DietReport& diet = ctx.objects.publish<DietReport>(
      DietReport{.mode = td::pruning::Mode::Standard,
                 .profile = "default",
                 .tokens_before = 900,
                 .tokens_after = 500,
                 .strategies = {"identical_tool_outputs", "low_entropy", "stale_tool_outputs"}});
  ctx.objects.get<BilledUsage>().usage = {.prompt = 510, .completion = 20, .cached_read = 256, .present = true};
  const std::string text = access_line(ctx).text();
  CHECK(text.find(R"("profile":"default","mode":"standard","tokens_before":900,"tokens_after":500,)"
                  R"("strategies":"identical_tool_outputs,low_entropy,stale_tool_outputs",)"
                  R"("usage_prompt":510,"usage_completion":20,"usage_cached_read":256})") != std::string::npos);
  diet.mode = td::pruning::Mode::None;
  CHECK(access_line(ctx).text().find(R"("mode":"none")") != std::string::npos);
}

TEST_CASE("the access line: why an enabled diet left a request alone, and context-overflow recovery") {
  RequestContext ctx;
  ctx.method = "POST";
  ctx.target = "/v1/messages";
  ctx.provider = Provider::anthropic;
  CHECK(access_line(ctx).text().find("mode_reason") == std::string::npos);
  CHECK(access_line(ctx).text().find("recovery") == std::string::npos);
  ctx.objects.publish<DietReport>(DietReport{.mode = td::pruning::Mode::None, .reason = "client_compaction"});
  CHECK(access_line(ctx).text().find(R"("mode":"none","mode_reason":"client_compaction")") != std::string::npos);
  ctx.objects.publish<RecoveryReport>(RecoveryReport{"retried"});
  CHECK(access_line(ctx).text().find(R"("recovery":"retried")") != std::string::npos);
}

TEST_CASE("the access line names the entries the recall loop read back, and its rounds") {
  RequestContext ctx;
  ctx.method = "POST";
  ctx.target = "/v1/messages";
  CHECK(access_line(ctx).text().find("recalled") == std::string::npos);
  ctx.objects.publish<RecallReport>(RecallReport{{"td-aa", "td-bb"}, 2});
  CHECK(access_line(ctx).text().find(R"("recalled":"td-aa,td-bb","recall_rounds":2)") != std::string::npos);
}

TEST_CASE("the access line: the tasks semantic eviction took outputs of, and an archive write that failed") {
  RequestContext ctx;
  ctx.target = "/v1/chat/completions";
  CHECK(access_line(ctx).text().find("evicted_tasks") == std::string::npos);
  ctx.objects.publish<EvictionReport>(
      EvictionReport{{"Fix the parser", "say \"hi\""}, "create /x/td-1.tmp: No space left on device"});
  const std::string line = access_line(ctx).text();
  CHECK(line.find(R"("evicted_tasks":["Fix the parser","say \"hi\""])") != std::string::npos);
  CHECK(line.find(R"("archive_error":"create /x/td-1.tmp: No space left on device")") != std::string::npos);
}

TEST_CASE("the access line: shadow and control say their arm and what the diet would have sent; re-reads") {
  RequestContext ctx;
  ctx.method = "POST";
  ctx.target = "/v1/chat/completions";
  DietReport& diet = ctx.objects.publish<DietReport>(DietReport{.mode = td::pruning::Mode::Standard,
                                                                .tokens_before = 68778,
                                                                .tokens_after = 68778,
                                                                .arm = td::pruning::Arm::Shadow,
                                                                .tokens_diet = 19494,
                                                                .rereads = 2});
  std::string text = access_line(ctx).text();
  CHECK(text.find(R"("tokens_before":68778,"tokens_after":68778,"arm":"shadow","tokens_diet":19494,"rereads":2)") !=
        std::string::npos);
  diet.arm = td::pruning::Arm::Treatment;
  diet.rereads = 0;
  text = access_line(ctx).text();
  CHECK(text.find("arm") == std::string::npos);
  CHECK(text.find("tokens_diet") == std::string::npos);
  CHECK(text.find("rereads") == std::string::npos);
}
