# cmake -DIN=file -DOUT=file.cpp -P embed_file.cmake
# Writes a C++ source defining td::config::embedded_default_yaml() with the
# bytes of IN, so the binary carries config/tokendiet.example.yaml verbatim.
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" hex_len)
math(EXPR size "${hex_len} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," bytes "${hex}")
string(REGEX REPLACE "(('\\\\x[0-9a-f][0-9a-f]',){16})" "\\1\n  " bytes "${bytes}")
set(content "// Generated from config/tokendiet.example.yaml by config/embed_file.cmake. Do not edit.
#include <string_view>

#include \"config/load.hpp\"

namespace td::config {
namespace {
const char kBytes[] = {
  ${bytes}'\\0'};
}  // namespace

std::string_view embedded_default_yaml() { return {kBytes, ${size}}; }

}  // namespace td::config
")
# Only touch the output when it changes, so nothing rebuilds needlessly.
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
  if(old STREQUAL content)
    return()
  endif()
endif()
file(WRITE "${OUT}" "${content}")
