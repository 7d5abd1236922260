# assocgen-config-version.cmake: the version of the assocgen CMake package, read from the Python
# package it ships in (this folder is <package>/cmake, the version is <package>/__init__.py's
# __version__), so the two never disagree.
#
# Compatible: the same major version, and at least the version asked for; before 1.0 the minor
# version must match too (0.x releases may change the command line).  A version range
# (find_package(assocgen 0.2...<0.4)) is honoured as given.

set(PACKAGE_VERSION "")
file(STRINGS "${CMAKE_CURRENT_LIST_DIR}/../__init__.py" _assocgen_version_line
     REGEX "^__version__ *= *[\"'][^\"']+[\"']" LIMIT_COUNT 1)
if(_assocgen_version_line MATCHES "[\"']([^\"']+)[\"']")
  set(PACKAGE_VERSION "${CMAKE_MATCH_1}")
endif()
unset(_assocgen_version_line)

if(PACKAGE_VERSION STREQUAL "")
  set(PACKAGE_VERSION "unknown")
  set(PACKAGE_VERSION_UNSUITABLE TRUE)
  return()
endif()

if(PACKAGE_FIND_VERSION_RANGE)
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
  if(PACKAGE_VERSION VERSION_GREATER_EQUAL PACKAGE_FIND_VERSION_MIN AND
     ((PACKAGE_FIND_VERSION_RANGE_MAX STREQUAL "INCLUDE" AND PACKAGE_VERSION VERSION_LESS_EQUAL PACKAGE_FIND_VERSION_MAX) OR
      (PACKAGE_FIND_VERSION_RANGE_MAX STREQUAL "EXCLUDE" AND PACKAGE_VERSION VERSION_LESS PACKAGE_FIND_VERSION_MAX)))
    set(PACKAGE_VERSION_COMPATIBLE TRUE)
  endif()
elseif(PACKAGE_FIND_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
  string(REGEX MATCH "^([0-9]+)(\\.([0-9]+))?" _assocgen_have "${PACKAGE_VERSION}")
  set(_assocgen_have_major "${CMAKE_MATCH_1}")
  set(_assocgen_have_minor "${CMAKE_MATCH_3}")
  if(PACKAGE_VERSION VERSION_GREATER_EQUAL PACKAGE_FIND_VERSION AND
     PACKAGE_FIND_VERSION_MAJOR EQUAL _assocgen_have_major)
    if(NOT _assocgen_have_major EQUAL 0 OR PACKAGE_FIND_VERSION_COUNT LESS 2 OR
       PACKAGE_FIND_VERSION_MINOR EQUAL _assocgen_have_minor)
      set(PACKAGE_VERSION_COMPATIBLE TRUE)
    endif()
  endif()
  if(PACKAGE_FIND_VERSION VERSION_EQUAL PACKAGE_VERSION)
    set(PACKAGE_VERSION_EXACT TRUE)
  endif()
  unset(_assocgen_have)
  unset(_assocgen_have_major)
  unset(_assocgen_have_minor)
else()
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
endif()
