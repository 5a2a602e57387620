# The Debian package, built by CPack: `cpack -G DEB` in the build directory
# (scripts/package.sh builds and runs it). It holds
#   /usr/bin/tokendiet                        (stripped)
#   /lib/systemd/system/tokendiet.service     scripts/tokendiet.service with /usr paths
#   /etc/tokendiet/tokendiet.yaml             the embedded default's file, a conffile
#   /usr/share/doc/tokendiet/                 README.md, copyright, changelog.Debian.gz
# and the maintainer scripts in scripts/debian/; Depends from dpkg-shlibdeps.
# Everything lands at an absolute path (CPACK_SET_DESTDIR), as dpkg installs it.
set(TD_DEB_DIR ${PROJECT_SOURCE_DIR}/scripts/debian)
set(TD_PKG_STAGE ${PROJECT_BINARY_DIR}/packaging)

file(READ ${PROJECT_SOURCE_DIR}/scripts/tokendiet.service TD_UNIT)
string(REPLACE "/usr/local/" "/usr/" TD_UNIT "${TD_UNIT}")
file(WRITE ${TD_PKG_STAGE}/tokendiet.service "${TD_UNIT}")
# gzip -n: no name or time stamp, so the same changelog makes the same bytes.
execute_process(COMMAND gzip -9nc ${TD_DEB_DIR}/changelog OUTPUT_FILE ${TD_PKG_STAGE}/changelog.Debian.gz
  COMMAND_ERROR_IS_FATAL ANY)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
  ${PROJECT_SOURCE_DIR}/scripts/tokendiet.service ${TD_DEB_DIR}/changelog)

install(FILES ${TD_PKG_STAGE}/tokendiet.service DESTINATION /lib/systemd/system COMPONENT deb EXCLUDE_FROM_ALL)
install(FILES ${PROJECT_SOURCE_DIR}/config/tokendiet.example.yaml DESTINATION /etc/tokendiet
  RENAME tokendiet.yaml COMPONENT deb EXCLUDE_FROM_ALL)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${TD_DEB_DIR}/copyright ${TD_PKG_STAGE}/changelog.Debian.gz
  DESTINATION /usr/share/doc/tokendiet COMPONENT deb EXCLUDE_FROM_ALL)
# install(TARGETS), so CPACK_STRIP_FILES strips it.
install(TARGETS tokendiet RUNTIME DESTINATION /usr/bin COMPONENT deb EXCLUDE_FROM_ALL)

set(CPACK_GENERATOR DEB)
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_INSTALL_CMAKE_PROJECTS "${PROJECT_BINARY_DIR};${PROJECT_NAME};deb;/")
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGE_NAME tokendiet)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "Seed f22349ee maintainers <maintainers@users.noreply.a-seed-f22349ee.example>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "LLM API proxy that puts agent context on a diet")
# The synopsis is the summary above; this is the long description.
set(CPACK_PACKAGE_DESCRIPTION "tokendiet is a transparent reverse proxy for the OpenAI, Anthropic and Gemini
APIs. Coding agents (Claude Code, Codex CLI, Gemini CLI, opencode) send their
requests through it; it prunes stale tool outputs and repeats from the
context, keeps a tokens-per-minute quota from refusing them, and records
usage in a SQLite ledger. It runs as a systemd service.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
  ${TD_DEB_DIR}/conffiles ${TD_DEB_DIR}/postinst ${TD_DEB_DIR}/prerm ${TD_DEB_DIR}/postrm)
include(CPack)
