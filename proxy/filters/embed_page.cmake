# cmake -DIN=dashboard_page.html -DOUT=file.cpp -P embed_page.cmake
# Writes a C++ source defining td::proxy::dashboard_page() with the bytes of
# IN: the dashboard is served from the binary, nothing read from disk or the
# network (docs/design.md §Dashboard).
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" hex_len)
math(EXPR size "${hex_len} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," bytes "${hex}")
string(REGEX REPLACE "(('\\\\x[0-9a-f][0-9a-f]',){16})" "\\1\n  " bytes "${bytes}")
set(content "// Generated from proxy/filters/dashboard_page.html by embed_page.cmake. Do not edit.
#include <string_view>

namespace td::proxy {
namespace {
const char kBytes[] = {
  ${bytes}'\\0'};
}  // namespace

std::string_view dashboard_page() { return {kBytes, ${size}}; }

}  // namespace td::proxy
")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
  if(old STREQUAL content)
    return()
  endif()
endif()
file(WRITE "${OUT}" "${content}")
