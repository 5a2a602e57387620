// The archive store (archive/store.hpp): entries round-trip byte for byte,
// files and directories are private, one key never reads another's entries,
// retention removes the least recently used first, and a write that cannot
// happen says so and loses nothing.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "archive/index.hpp"
#include "archive/store.hpp"
#include "temp_dir.hpp"

using td::archive::Retention;
using td::archive::Store;
using td::pruning::archive_id;
using td::pruning::ArchivedOutput;
using td::test::TempDir;

namespace {

constexpr std::string_view kKeyA = "0123456789abcdef";
constexpr std::string_view kKeyB = "fedcba9876543210";

ArchivedOutput output(std::string text, std::string task = "fix the parser", std::uint32_t tokens = 7) {
  ArchivedOutput o;
  o.id = archive_id(text);
  o.task = std::move(task);
  o.tokens = tokens;
  o.text = std::move(text);
  return o;
}

unsigned mode_of(const std::string& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_mode & 0777;
}

Store::Options at_time(std::int64_t* now, Retention retention = {}) {
  Store::Options o;
  o.retention = retention;
  o.clock = [now] { return *now; };
  return o;
}

}  // namespace

TEST_CASE("archive_id: td- and 32 lowercase hex digits of XXH3_128, the same for the same text") {
  const std::string id = archive_id("hello");
  CHECK(id.size() == 35);
  CHECK(td::archive::valid_id(id));
  CHECK(id == archive_id("hello"));
  CHECK(id != archive_id("hello "));
  // XXH3_128("") is 99aa06d3014798d86001c324468d497f (canonical form).
  CHECK(archive_id("") == "td-99aa06d3014798d86001c324468d497f");
}

TEST_CASE("an entry written is read back byte for byte, with its task and tokens, also after reopening") {
  TempDir tmp;
  std::string text = "line one\n\tline two \xe2\x9c\x93\n";
  text.push_back('\0');
  text += "after a NUL\r\n";
  const ArchivedOutput a = output(text, "task with \\ and\nnewline", 42);
  {
    Store store(tmp.path());
    REQUIRE(store.write(kKeyA, std::span(&a, 1)));
    auto got = store.read(kKeyA, a.id);
    REQUIRE(got);
    CHECK(got->text == text);
    CHECK(got->info.task == a.task);
    CHECK(got->info.tokens == 42);
    CHECK(got->info.bytes == text.size());
  }
  Store reopened(tmp.path());
  auto got = reopened.read(kKeyA, a.id);
  REQUIRE(got);
  CHECK(got->text == text);
  CHECK(got->info.task == a.task);
  CHECK(got->info.tokens == 42);
  // The file holds exactly the text: what `cat` shows is what was evicted.
  std::ifstream in(tmp.path() + "/" + std::string(kKeyA) + "/" + a.id, std::ios::binary);
  std::string on_disk((std::istreambuf_iterator<char>(in)), {});
  CHECK(on_disk == text);
}

TEST_CASE("writing the same id again is a no-op: one file, one index line") {
  TempDir tmp;
  Store store(tmp.path());
  const ArchivedOutput a = output("same output");
  REQUIRE(store.write(kKeyA, std::span(&a, 1)));
  REQUIRE(store.write(kKeyA, std::span(&a, 1)));
  const ArchivedOutput twice[] = {a, a};
  REQUIRE(store.write(kKeyA, twice));
  CHECK(store.list().size() == 1);
  CHECK(store.total_bytes() == a.text.size());
  std::ifstream in(tmp.path() + "/" + std::string(kKeyA) + "/index");
  std::string index((std::istreambuf_iterator<char>(in)), {});
  CHECK(td::archive::parse_index(index).size() == 1);
}

TEST_CASE("directories are 0700 and files 0600, whatever the umask") {
  TempDir tmp;
  const mode_t old = ::umask(0);
  const std::string root = tmp.path() + "/state/archive";
  Store store(root);
  const ArchivedOutput a = output("private");
  REQUIRE(store.write(kKeyA, std::span(&a, 1)));
  ::umask(old);
  CHECK(mode_of(root) == 0700);
  CHECK(mode_of(root + "/" + std::string(kKeyA)) == 0700);
  CHECK(mode_of(root + "/" + std::string(kKeyA) + "/" + a.id) == 0600);
  CHECK(mode_of(root + "/" + std::string(kKeyA) + "/index") == 0600);
}

TEST_CASE("one key never reads another's entries; an anonymous client's are kept apart and never read by key") {
  TempDir tmp;
  Store store(tmp.path());
  const ArchivedOutput a = output("key A's output");
  const ArchivedOutput none = output("no key's output");
  REQUIRE(store.write(kKeyA, std::span(&a, 1)));
  REQUIRE(store.write("", std::span(&none, 1)));
  CHECK(store.read(kKeyA, a.id));
  CHECK_FALSE(store.read(kKeyB, a.id));
  CHECK_FALSE(store.read("", a.id));
  // Written and durable under its own directory, but no key (not even none)
  // reads it: only the operator's view does (docs/design.md §The archive).
  CHECK(std::filesystem::exists(tmp.path() + "/nokey/" + none.id));
  CHECK_FALSE(store.read("", none.id));
  CHECK_FALSE(store.read(kKeyA, none.id));
  CHECK(store.read_any(none.id));
  CHECK(store.list(std::string_view()).size() == 1);
  CHECK(store.list(kKeyA).size() == 1);
  CHECK(store.list(kKeyB).empty());
  // The operator's view reads any key's entry.
  CHECK(store.read_any(a.id));
  // Neither a key nor an id can name a path outside the key's directory.
  CHECK_FALSE(store.read("../" + std::string(kKeyA).substr(3), a.id));
  CHECK_FALSE(store.read(kKeyA, "../" + std::string(kKeyA) + "/index"));
  const ArchivedOutput bad{"td-../../x", "t", 1, "x"};
  CHECK_FALSE(store.write(kKeyA, std::span(&bad, 1)));
  CHECK_FALSE(store.write("../escape", std::span(&a, 1)));
}

TEST_CASE("a damaged entry file is not returned") {
  TempDir tmp;
  Store store(tmp.path());
  const ArchivedOutput a = output("original text");
  REQUIRE(store.write(kKeyA, std::span(&a, 1)));
  std::ofstream(tmp.path() + "/" + std::string(kKeyA) + "/" + a.id, std::ios::trunc) << "tampered";
  CHECK_FALSE(store.read(kKeyA, a.id));
}

TEST_CASE("retention: entries unused for max_age go; over max_bytes the least recently used go first") {
  TempDir tmp;
  std::int64_t now = 1'000'000;
  Store store(tmp.path(), at_time(&now, Retention{.max_bytes = 250, .max_age = std::chrono::seconds(3600)}));
  const ArchivedOutput a = output(std::string(100, 'a'));
  const ArchivedOutput b = output(std::string(100, 'b'));
  const ArchivedOutput c = output(std::string(100, 'c'));
  REQUIRE(store.write(kKeyA, std::span(&a, 1)));
  now += 100;
  REQUIRE(store.write(kKeyB, std::span(&b, 1)));
  now += 100;
  // a is referenced again: it is now more recently used than b.
  REQUIRE(store.write(kKeyA, std::span(&a, 1)));
  now += 100;
  REQUIRE(store.write(kKeyA, std::span(&c, 1)));  // 300 bytes > 250: b goes
  CHECK(store.read(kKeyA, a.id));
  CHECK_FALSE(store.read(kKeyB, b.id));
  CHECK(store.read(kKeyA, c.id));
  CHECK(store.total_bytes() == 200);
  CHECK_FALSE(std::filesystem::exists(tmp.path() + "/" + std::string(kKeyB) + "/" + b.id));
  // An hour later, a write of another entry expires both.
  now += 3601;
  const ArchivedOutput d = output("d");
  REQUIRE(store.write(kKeyB, std::span(&d, 1)));
  CHECK(store.list().size() == 1);
  CHECK(store.removed_entries() == 3);
  // The indexes were rewritten: a reopened store sees the same.
  Store reopened(tmp.path(), at_time(&now));
  REQUIRE(reopened.list().size() == 1);
  CHECK(reopened.list()[0].id == d.id);
}

TEST_CASE("retention never removes an entry of the write that just happened, even one over max_bytes") {
  TempDir tmp;
  std::int64_t now = 1'000'000;
  Store store(tmp.path(), at_time(&now, Retention{.max_bytes = 10, .max_age = {}}));
  const ArchivedOutput big = output(std::string(100, 'x'));
  REQUIRE(store.write(kKeyA, std::span(&big, 1)));
  CHECK(store.read(kKeyA, big.id));
}

TEST_CASE("an unwritable archive: write() returns false with the reason, and nothing already there is lost") {
  TempDir tmp;
  const ArchivedOutput a = output("kept before");
  const ArchivedOutput b = output("cannot be written");
  SUBCASE("the archive directory is below a regular file") {
    std::ofstream(tmp.file("not-a-dir")) << "x";
    Store store(tmp.file("not-a-dir") + "/archive");
    CHECK_FALSE(store.write(kKeyA, std::span(&b, 1)));
    CHECK(store.last_error().find("not-a-dir") != std::string::npos);
    CHECK_FALSE(store.read(kKeyA, b.id));
    CHECK(store.list().empty());
  }
  SUBCASE("an entry's file cannot be created in a directory that holds entries") {
    Store store(tmp.path());
    REQUIRE(store.write(kKeyA, std::span(&a, 1)));
    // Root ignores permission bits, so the failure is made another way: a
    // directory stands where the entry's temporary file would go.
    std::filesystem::create_directory(tmp.path() + "/" + std::string(kKeyA) + "/" + b.id + ".tmp");
    if (::geteuid() != 0) ::chmod((tmp.path() + "/" + std::string(kKeyA)).c_str(), 0500);
    CHECK_FALSE(store.write(kKeyA, std::span(&b, 1)));
    CHECK_FALSE(store.last_error().empty());
    CHECK_FALSE(store.read(kKeyA, b.id));
    ::chmod((tmp.path() + "/" + std::string(kKeyA)).c_str(), 0700);
    auto kept = store.read(kKeyA, a.id);
    REQUIRE(kept);
    CHECK(kept->text == a.text);
    CHECK(Store(tmp.path()).read(kKeyA, a.id));
  }
}

TEST_CASE("an entry whose index line a crash lost is adopted when the archive is opened; torn temp files go") {
  TempDir tmp;
  const ArchivedOutput a = output("renamed, but the index line never made it");
  {
    Store store(tmp.path());
    REQUIRE(store.write(kKeyA, std::span(&a, 1)));
  }
  const std::string dir = tmp.path() + "/" + std::string(kKeyA);
  std::filesystem::remove(dir + "/index");
  std::ofstream(dir + "/td-0123.tmp") << "half";
  Store reopened(tmp.path());
  auto got = reopened.read(kKeyA, a.id);
  REQUIRE(got);
  CHECK(got->text == a.text);
  CHECK_FALSE(std::filesystem::exists(dir + "/td-0123.tmp"));
}

TEST_CASE("a read-only store reads and never writes") {
  TempDir tmp;
  const ArchivedOutput a = output("x");
  REQUIRE(Store(tmp.path()).write(kKeyA, std::span(&a, 1)));
  Store::Options ro;
  ro.read_only = true;
  Store store(tmp.path(), ro);
  CHECK(store.read(kKeyA, a.id));
  const ArchivedOutput b = output("y");  // a new entry: no deduplication could answer for it
  CHECK_FALSE(store.write(kKeyA, std::span(&b, 1)));
  CHECK_FALSE(store.read(kKeyA, b.id));
  CHECK_FALSE(std::filesystem::exists(tmp.path() + "/" + std::string(kKeyA) + "/" + b.id));
}

TEST_CASE("index lines: round trip, escapes, a torn last line skipped") {
  using td::archive::IndexLine;
  const IndexLine line{123, archive_id("t"), 9, 1, "a \\ b\nc"};
  const std::string text = render_index_line(line) + render_index_line(line).substr(0, 20);
  const auto parsed = td::archive::parse_index(text);
  REQUIRE(parsed.size() == 1);
  CHECK(parsed[0] == line);
  CHECK(td::archive::parse_index("x td-zz 1 1 t\n").empty());
}
