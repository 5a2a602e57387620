# td_module(NAME SOURCES... ) : a static library, or an interface library while
# the module has no sources yet, so modules can grow one file at a time.
function(td_module name)
  set(srcs ${ARGN})
  if(srcs)
    add_library(${name} STATIC ${srcs})
    set(scope PUBLIC)
  else()
    add_library(${name} INTERFACE)
    set(scope INTERFACE)
  endif()
  target_include_directories(${name} ${scope} ${PROJECT_SOURCE_DIR})
  set(TD_SCOPE ${scope} PARENT_SCOPE)
endfunction()
