// A part's text, immutable and shared between the copies of its part.
//
// The parse memo hands each request copies of the messages it parsed before
// (docs/design.md §Memos and caches): with an owned std::string a copy
// allocated and copied every text of a long history on every request; a
// shared one costs a reference count. A cut that hides a text keeps the same
// block for the recall loop (conversation.hpp, hide_text()). Reads see a
// `const std::string&`; a write makes a new block, so no copy ever sees
// another's change. The block is never written after it is made, which is
// what lets requests on several threads share it.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

namespace td::pruning {

class SharedText {
 public:
  SharedText() = default;
  SharedText(std::string s) { assign(std::move(s)); }
  SharedText(std::string_view s) { assign(std::string(s)); }
  SharedText(const char* s) { assign(std::string(s)); }
  SharedText& operator=(std::string s) {
    assign(std::move(s));
    return *this;
  }
  SharedText& operator=(std::string_view s) { return *this = std::string(s); }
  SharedText& operator=(const char* s) { return *this = std::string(s); }

  const std::string& str() const { return block_ ? *block_ : none(); }
  operator const std::string&() const { return str(); }
  operator std::string_view() const { return str(); }
  // The block itself (null while empty), for a holder that outlives the part.
  std::shared_ptr<const std::string> share() const { return block_; }

  // An append makes a new block: only while a part is built or its notice
  // written, never on a text some copy still shares by design.
  SharedText& operator+=(std::string_view more) {
    std::string s = str();
    s += more;
    return *this = std::move(s);
  }
  SharedText& operator+=(char c) { return *this += std::string_view(&c, 1); }

  std::size_t size() const { return str().size(); }
  std::size_t length() const { return str().size(); }
  bool empty() const { return !block_ || block_->empty(); }
  const char* data() const { return str().data(); }
  const char* c_str() const { return str().c_str(); }
  std::string::const_iterator begin() const { return str().begin(); }
  std::string::const_iterator end() const { return str().end(); }
  char operator[](std::size_t i) const { return str()[i]; }
  char front() const { return str().front(); }
  char back() const { return str().back(); }
  std::string substr(std::size_t pos = 0, std::size_t n = std::string::npos) const { return str().substr(pos, n); }
  template <class... A>
  std::size_t find(A&&... a) const {
    return str().find(std::forward<A>(a)...);
  }
  template <class... A>
  std::size_t rfind(A&&... a) const {
    return str().rfind(std::forward<A>(a)...);
  }
  template <class... A>
  std::size_t find_first_of(A&&... a) const {
    return str().find_first_of(std::forward<A>(a)...);
  }
  template <class... A>
  std::size_t find_first_not_of(A&&... a) const {
    return str().find_first_not_of(std::forward<A>(a)...);
  }
  template <class... A>
  std::size_t find_last_not_of(A&&... a) const {
    return str().find_last_not_of(std::forward<A>(a)...);
  }
  template <class... A>
  int compare(A&&... a) const {
    return str().compare(std::forward<A>(a)...);
  }
  bool starts_with(std::string_view s) const { return std::string_view(str()).starts_with(s); }
  bool ends_with(std::string_view s) const { return std::string_view(str()).ends_with(s); }
  bool contains(std::string_view s) const { return str().find(s) != std::string::npos; }

  friend bool operator==(const SharedText& a, const SharedText& b) {
    return a.block_ == b.block_ || a.str() == b.str();
  }
  friend bool operator==(const SharedText& a, std::string_view b) { return std::string_view(a.str()) == b; }
  friend bool operator==(const SharedText& a, const std::string& b) { return a.str() == b; }
  friend bool operator==(const SharedText& a, const char* b) { return a.str() == b; }
  friend std::string operator+(const SharedText& a, std::string_view b) {
    std::string s = a.str();
    s += b;
    return s;
  }
  friend std::string operator+(std::string_view a, const SharedText& b) {
    std::string s(a);
    s += b.str();
    return s;
  }
  friend std::ostream& operator<<(std::ostream& os, const SharedText& t) { return os << t.str(); }

 private:
  static const std::string& none() {
    static const std::string kNone;
    return kNone;
  }
  void assign(std::string s) { block_ = s.empty() ? nullptr : std::make_shared<const std::string>(std::move(s)); }

  std::shared_ptr<const std::string> block_;
};

}  // namespace td::pruning
