#include "proxy/filters/archive_filter.hpp"

#include "archive/store.hpp"
#include "proxy/phases/errors.hpp"

namespace td::proxy {
namespace {

// A read on the archive's thread: its inputs and its answer.
struct ArchiveRead {
  archive::Store* store = nullptr;
  Provider provider = Provider::other;
  std::string key_fp, id;
  LocalResponse answer;
};

// The read did not come back in time. The request must not go upstream with
// the client's key.
LocalResponse unavailable(Provider provider) {
  LocalResponse r;
  r.status = 503;
  r.body = provider_error_body(provider, 503, "tokendiet: the archive did not answer in time; retry");
  r.headers.emplace_back("retry-after", "1");
  r.headers.emplace_back("x-tokendiet-error", "archive_unavailable");
  return r;
}

}  // namespace

LocalResponse archive_answer(const archive::Store* store, Provider provider, std::string_view key_fp,
                             std::string_view id) {
  // An anonymous client's entries are never read back by a request: nothing
  // in one proves it is the client that wrote them (docs/design.md §The archive).
  std::optional<archive::Entry> entry = store && !key_fp.empty() ? store->read(key_fp, id) : std::nullopt;
  LocalResponse r;
  if (!entry) {
    r.status = 404;
    r.body = provider_error_body(provider, 404, "tokendiet: no archive entry " + std::string(id) + " for this API key");
    r.headers.emplace_back("x-tokendiet-error", "archive_entry_not_found");
    return r;
  }
  r.content_type = "text/plain; charset=utf-8";
  r.body = std::move(entry->text);
  r.headers.emplace_back("x-tokendiet-archive-tokens", std::to_string(entry->info.tokens));
  return r;
}

FilterResult ArchiveFilter::request_filter(RequestContext& ctx, HeaderMap&) {
  if (!ctx.path().starts_with(kPathPrefix)) return {};
  if (ctx.method != "GET" && ctx.method != "HEAD") {
    LocalResponse r;
    r.status = 405;
    r.body = provider_error_body(ctx.provider, 405, "tokendiet: the archive is read with GET");
    r.headers.emplace_back("allow", "GET, HEAD");
    return FilterResult::respond(std::move(r));
  }
  const std::string id(ctx.path().substr(kPathPrefix.size()));
  archive::Store* store = store_();
  if (!thread_ || !store || ctx.key_fingerprint.empty())
    return FilterResult::respond(archive_answer(store, ctx.provider, ctx.key_fingerprint, id));
  auto read = std::make_shared<ArchiveRead>(ArchiveRead{store, ctx.provider, ctx.key_fingerprint, id, {}});
  return run_off_thread(
      thread_, kReadWait, std::move(read),
      OffThreadSteps<ArchiveRead>{
          .work = [](ArchiveRead& r, const auto&) { r.answer = archive_answer(r.store, r.provider, r.key_fp, r.id); },
          .finish = [](PausedRequest, ArchiveRead& r) { return std::optional(std::move(r.answer)); },
          .give_back = [](PausedRequest, ArchiveRead& r) { return std::optional(unavailable(r.provider)); },
      });
}

}  // namespace td::proxy
