# cmake -DIN=file -DOUT=file.cpp -DNAMESPACE=td::x -DFUNCTION=name [-DHEADER=x/y.hpp] -P embed_file.cmake
# Writes a C++ source defining `std::string_view NAMESPACE::FUNCTION()` with
# the bytes of IN, so the binary carries the file verbatim: the default
# config (config/tokendiet.example.yaml) and the dashboard's page
# (docs/design.md §Dashboard), nothing read from disk or the network.
# HEADER, when given, is the header declaring the function.
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" hex_len)
math(EXPR size "${hex_len} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," bytes "${hex}")
string(REGEX REPLACE "(('\\\\x[0-9a-f][0-9a-f]',){16})" "\\1\n  " bytes "${bytes}")
get_filename_component(name "${IN}" NAME)
set(include "")
if(HEADER)
  set(include "\n#include \"${HEADER}\"\n")
endif()
set(content "// Generated from ${name} by cmake/embed_file.cmake. Do not edit.
#include <string_view>
${include}
namespace ${NAMESPACE} {
namespace {
const char kBytes[] = {
  ${bytes}'\\0'};
}  // namespace

std::string_view ${FUNCTION}() { return {kBytes, ${size}}; }

}  // namespace ${NAMESPACE}
")
# Only touch the output when it changes, so nothing rebuilds needlessly.
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
  if(old STREQUAL content)
    return()
  endif()
endif()
file(WRITE "${OUT}" "${content}")
