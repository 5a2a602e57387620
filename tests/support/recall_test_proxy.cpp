// A proxy for the recall loop's end-to-end tests (tests/e2e/recall_sdk.test.mjs):
// the real network core with the recall and usage filters, behind a filter of
// the tests' own that does the diet's part for every request (append the
// tokendiet_recall tool, offer the recall loop entries read from a directory, one
// file per entry id), so the loop is driven by any entries a test chooses,
// without a history long enough for semantic mode. The same loop through
// `tokendiet serve` and the real archive: tests/e2e/archive_eviction_sdk.test.mjs.
// Test code only: nothing of it is in the tokendiet binary.
//   recall_test_proxy UPSTREAM_PORT ARCHIVE_DIR     prints "LISTENING <port>"
#include <csignal>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "config/config.hpp"
#include "providers/api.hpp"
#include "providers/recall_tool.hpp"
#include "proxy/filters/recall_filter.hpp"
#include "proxy/filters/usage_filter.hpp"
#include "proxy/reports/recall_offer.hpp"
#include "proxy_harness.hpp"

using namespace td::proxy;

namespace {

struct DirectorySource final : RecallSource {
  std::string dir;
  std::optional<std::string> read(std::string_view, std::string_view id) const override {
    if (id.find('/') != std::string_view::npos || id.find("..") != std::string_view::npos) return std::nullopt;
    std::ifstream in(dir + "/" + std::string(id), std::ios::binary);
    if (!in) return std::nullopt;
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
};

class AsTheDietWill final : public Filter {
 public:
  AsTheDietWill(const RecallSource* source, RecallLimits limits) : source_(source), limits_(limits) {}
  std::string_view name() const override { return "test_recall_setup"; }
  FilterResult request_body_filter(RequestContext& ctx, const HeaderMap&, std::string& body) override {
    if (auto api = td::providers::api_for_target(ctx.target)) {
      td::providers::append_recall_tool(*api, body);
      ctx.objects.publish<RecallOffer>(
          RecallOffer{std::shared_ptr<const RecallSource>(std::shared_ptr<void>(), source_), limits_});
    }
    return {};
  }

 private:
  const RecallSource* source_;
  RecallLimits limits_;
};

volatile std::sig_atomic_t g_stop = 0;

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: recall_test_proxy UPSTREAM_PORT ARCHIVE_DIR\n");
    return 2;
  }
  DirectorySource archive;
  archive.dir = argv[2];
  td::config::Config cfg;
  RecallLimits limits;
  limits.max_body_bytes = cfg.limits.max_body_bytes;  // as the recall offer filter sets it
  std::vector<std::unique_ptr<Filter>> chain;
  chain.push_back(std::make_unique<AsTheDietWill>(&archive, limits));
  chain.push_back(std::make_unique<RecallFilter>());
  chain.push_back(std::make_unique<UsageFilter>(cfg));
  td::net_test::TestProxy proxy(std::move(chain), static_cast<unsigned short>(std::stoi(argv[1])));
  std::printf("LISTENING %u\n", proxy.port());
  std::fflush(stdout);
  std::signal(SIGTERM, [](int) { g_stop = 1; });
  std::signal(SIGINT, [](int) { g_stop = 1; });
  while (!g_stop) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::_Exit(0);  // the clients may keep connections open: no drain
}
